package acptest_test

import (
	"context"
	"fmt"
	"io"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

func ExampleAgent_Serve() {
	agentOut, toClient := io.Pipe()
	fromClient, agentIn := io.Pipe()
	go func() {
		_ = (&acptest.Agent{}).Serve(fromClient, toClient)
		toClient.Close()
	}()
	c := acp.NewClient(agentOut, agentIn, acp.Config{})
	defer c.Close()
	init, err := c.Initialize(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(init.ProtocolVersion, init.AgentInfo.Name)
	// Output: 1 acptest
}

func ExampleTranscript() {
	agentOut, toClient := io.Pipe()
	fromClient, agentIn := io.Pipe()
	go func() {
		_ = (&acptest.Agent{Chunks: 1}).Serve(fromClient, toClient)
		toClient.Close()
	}()
	var tr acptest.Transcript
	c := acp.NewClient(agentOut, agentIn, acp.Config{OnUpdate: tr.OnUpdate, OnPermission: tr.OnPermission})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		panic(err)
	}
	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work"})
	if err != nil {
		panic(err)
	}
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("go"))
	if err != nil {
		panic(err)
	}
	tr.Addf("stop %s", res.StopReason)
	for _, l := range tr.Lines() {
		fmt.Println(l)
	}
	// Output:
	// update {"content":{"type":"text","text":"before 0"},"sessionUpdate":"agent_message_chunk"}
	// update {"kind":"edit","sessionUpdate":"tool_call","status":"pending","title":"Edit config","toolCallId":"call_1"}
	// permission call_1 [{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]
	// update {"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"call_1"}
	// update {"content":{"type":"text","text":"after 0"},"sessionUpdate":"agent_message_chunk"}
	// stop end_turn
}
