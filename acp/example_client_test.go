package acp_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

// startAgent runs the scripted fake agent on in-memory pipes and returns
// the client's ends: the agent's output and its input.
func startAgent() (io.Reader, io.WriteCloser) {
	agentOut, toClient := io.Pipe()
	fromClient, agentIn := io.Pipe()
	go func() {
		_ = (&acptest.Agent{}).Serve(fromClient, toClient)
		toClient.Close()
	}()
	return agentOut, agentIn
}

func ExampleClient_Initialize() {
	agentOut, agentIn := startAgent()
	c := acp.NewClient(agentOut, agentIn, acp.Config{
		ClientInfo: &acp.Implementation{Name: "my-runner", Version: "1.0"},
	})
	defer c.Close()
	ctx := context.Background()

	// Session methods wait for initialize; before it they are refused.
	_, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work"})
	fmt.Println(errors.Is(err, acp.CodeClientNotInitialized))

	res, err := c.Initialize(ctx)
	if errors.Is(err, acp.CodeProtocolVersionUnsupported) {
		fmt.Println("the agent speaks another ACP version")
		return
	} else if err != nil {
		panic(err)
	}
	fmt.Println(res.ProtocolVersion, res.AgentInfo.Name)
	// Output:
	// true
	// 1 acptest
}

func ExampleClient_NewSession() {
	agentOut, agentIn := startAgent()
	c := acp.NewClient(agentOut, agentIn, acp.Config{
		Limits: acp.SessionLimits{MaxBuiltinTools: 2},
	})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		panic(err)
	}

	// Over a limit: refused before anything reaches the agent.
	_, err := c.NewSession(ctx, acp.NewSessionRequest{
		Cwd:          "/work",
		BuiltinTools: []string{"read", "write", "shell"},
	})
	fmt.Println(errors.Is(err, acp.CodeBuiltinToolsTooLarge))

	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work", BuiltinTools: []string{"read"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.SessionID != "")
	// Output:
	// true
	// true
}

func ExampleClient_Close() {
	agentOut, agentIn := startAgent()
	c := acp.NewClient(agentOut, agentIn, acp.Config{})
	if _, err := c.Initialize(context.Background()); err != nil {
		panic(err)
	}
	c.Close() // the agent's stdin closes: it exits
	<-c.Done()

	// Every later call fails with CodeClientClosed; Err says why it ended.
	_, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/work"})
	fmt.Println(errors.Is(err, acp.CodeClientClosed), c.Err() != nil)
	// Output: true true
}

func ExampleCommitPermission() {
	agentOut, agentIn := startAgent()
	var booked []string // what the host holds as answered: the agent may spend it
	c := acp.NewClient(agentOut, agentIn, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			// Commit before recording the answer: when the request was
			// cancelled already, the agent is told "cancelled", and
			// nothing is recorded for it; once committed, a Cancel no
			// longer changes the answer the agent is given.
			if !acp.CommitPermission(ctx) {
				return acp.CancelledOutcome()
			}
			booked = append(booked, req.ToolCall.Title)
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
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("Edit the config."))
	if err != nil {
		panic(err)
	}
	fmt.Println(booked, res.StopReason)
	// Output: [Edit config] end_turn
}
