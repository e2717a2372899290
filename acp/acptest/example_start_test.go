package acptest_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

// Start needs a test's testing.TB, so this example shows a test body; it
// is compiled, not run.
func ExampleStart() {
	testRunner := func(t *testing.T) {
		agentOut, agentIn := acptest.Start(t, &acptest.Agent{Chunks: 1})
		var tr acptest.Transcript
		c := acp.NewClient(agentOut, agentIn, acp.Config{OnUpdate: tr.OnUpdate, OnPermission: tr.OnPermission})
		defer c.Close()
		ctx := context.Background()
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("go"))
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != acp.StopEndTurn {
			t.Errorf("stop reason %q, want %q; transcript:\n%q", res.StopReason, acp.StopEndTurn, tr.Lines())
		}
	}
	_ = testRunner // func TestRunner(t *testing.T) in a _test.go file
}
