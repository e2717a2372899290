package acp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/checkfu/checkfu/acp"
)

// Prompt returns when the turn ends. An error the agent answers with is an
// *acp.RPCError: a failure reported by the peer, not a refusal.
func ExampleClient_Prompt() {
	agentOut, agentIn := startAgent()
	var updates int
	c := acp.NewClient(agentOut, agentIn, acp.Config{
		OnUpdate: func(acp.SessionNotification) { updates++ },
		// No OnPermission: every permission request is denied.
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
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("Edit the config."))
	fmt.Println(res.StopReason, err, updates > 0)

	_, err = c.Prompt(ctx, "no-such-session", acp.TextBlock("hello"))
	var rpcErr *acp.RPCError
	fmt.Println(errors.As(err, &rpcErr), rpcErr.Code)
	// Output:
	// end_turn <nil> true
	// true -32602
}

// ReadLine never delivers a partial line: input that ends inside one is
// CodeLineTruncated.
func ExampleReader_ReadLine() {
	r := acp.NewReader(strings.NewReader("{\"a\":1}\r\n\n{\"b\":"), 0)
	for {
		line, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(errors.Is(err, acp.CodeLineTruncated))
			break
		}
		fmt.Printf("%s\n", line)
	}
	// Output:
	// {"a":1}
	// true
}
