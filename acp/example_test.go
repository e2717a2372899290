package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

func ExampleNewReader() {
	in := strings.NewReader("{\"a\":1}\n" + strings.Repeat("x", 100) + "\n{\"b\":2}\n")
	r := acp.NewReader(in, 64) // a 64-byte bound, for the example
	for {
		line, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if code, ok := checkfu.CodeOf(err); ok {
			fmt.Println("error:", code) // the reader resynchronises
			continue
		}
		fmt.Printf("%s\n", line)
	}
	// Output:
	// {"a":1}
	// error: line_too_long
	// {"b":2}
}

func ExampleWriter_WriteLine() {
	var out strings.Builder
	w := acp.NewWriter(&out, 16)
	fmt.Println(w.WriteLine([]byte(`{"ok":true}`)))
	err := w.WriteLine([]byte(`{"much":"too long for sixteen bytes"}`))
	fmt.Println(errors.Is(err, acp.CodeLineTooLong))
	fmt.Printf("%q\n", out.String())
	// Output:
	// <nil>
	// true
	// "{\"ok\":true}\n"
}

func ExampleParseLine() {
	line := []byte(`[{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}},{"jsonrpc":"2.0","id":0,"result":{}}]`)
	msgs, err := acp.ParseLine(nil, line)
	if err != nil {
		panic(err)
	}
	for _, m := range msgs {
		// The same id, two different messages: a request from the agent
		// and a response to the client.
		fmt.Println(m.ID, m.IsRequest(), m.IsResponse())
	}
	// Output:
	// 0 true false
	// 0 false true
}

func ExampleSessionLimits_Check() {
	limits := acp.SessionLimits{MaxMCPServers: 1}
	req := acp.NewSessionRequest{
		Cwd:        "/work",
		MCPServers: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{}`)},
	}
	err := limits.Check(&req)
	fmt.Println(errors.Is(err, acp.CodeMCPServersTooMany))
	fmt.Println(err)
	// Output:
	// true
	// refused: mcp_servers_too_many: acp: session/new lists 2 mcpServers, more than the maximum of 1; nothing was sent
}

func ExampleNewClient() {
	// An agent process's stdout and stdin; here the scripted fake agent.
	agentOut, toClient := io.Pipe()
	fromClient, agentIn := io.Pipe()
	go func() {
		_ = (&acptest.Agent{Chunks: 1}).Serve(fromClient, toClient)
		toClient.Close()
	}()

	c := acp.NewClient(agentOut, agentIn, acp.Config{
		OnUpdate: func(n acp.SessionNotification) { fmt.Println("update:", n.Kind()) },
		OnPermission: func(_ context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			fmt.Println("permission for", req.ToolCall.Title)
			return acp.Select("allow")
		},
	})
	defer c.Close() // closes the agent's stdin: it exits

	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		panic(err)
	}
	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work"})
	if err != nil {
		panic(err)
	}
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("Edit the config."))
	if err != nil {
		panic(err)
	}
	fmt.Println("stop:", res.StopReason)
	// Output:
	// update: agent_message_chunk
	// update: tool_call
	// permission for Edit config
	// update: tool_call_update
	// update: agent_message_chunk
	// stop: end_turn
}

func ExampleClient_Cancel() {
	agentOut, toClient := io.Pipe()
	fromClient, agentIn := io.Pipe()
	go func() {
		_ = (&acptest.Agent{}).Serve(fromClient, toClient)
		toClient.Close()
	}()
	asked := make(chan string, 1)
	c := acp.NewClient(agentOut, agentIn, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			asked <- req.SessionID
			<-ctx.Done() // no answer until the turn is cancelled
			return acp.Select("allow")
		},
	})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		panic(err)
	}
	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work"})
	if err != nil {
		panic(err)
	}
	cancelled := make(chan error, 1)
	go func() {
		// The user gives up while the agent waits for permission.
		cancelled <- c.Cancel(<-asked)
	}()
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("Edit the config."))
	if err != nil {
		panic(err)
	}
	// The turn can end before session/cancel is written (the agent saw
	// the cancelled permission answer first): wait for it before Close.
	if err := <-cancelled; err != nil {
		panic(err)
	}
	fmt.Println("stop:", res.StopReason)
	// Output: stop: cancelled
}
