package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestAgentReachesToolsThroughTheDoor: with LaunchConfig.Door the Runner
// copies the door into the broker directory and announces it in
// session/new mcpServers; the agent lists and calls the session's tools
// through that stdio MCP server, as a third-party agent does, and the
// gateway decides as on the socket. session/new names the instance's own
// working directory as cwd.
func TestAgentReachesToolsThroughTheDoor(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	ctx := context.Background()
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript[:2]), Door: clitest.Door(t), OnUpdate: collect(&said)})
	if err != nil {
		t.Fatal(err)
	}
	if cwd := a.Cwd(); cwd == runner.Cwd || !filepath.IsAbs(cwd) {
		t.Errorf("session/new cwd %q, want the instance's directory", cwd)
	} else if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		t.Errorf("session/new cwd %q is not a directory: %v", cwd, err)
	}
	resp, err := a.Prompt(ctx, "go")
	if err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("Prompt = %v, %v", resp, err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[scripted] tools/list through the announced MCP server -> create_issue, list_issues",
		`[scripted] list_issues -> {"issues":[1]}`,
		"[scripted] list_issues (smuggling an Authorization header in its arguments) -> refused: arguments_invalid",
	} {
		if !slices.Contains(said, want) {
			t.Errorf("the agent did not say %q; said %q", want, said)
		}
	}
	if g.hits.Load() != 1 {
		t.Errorf("upstream hits %d, want 1", g.hits.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	es := entries(t, g.Runner, member.Session)
	got := rows(es[len(es)-5:])
	want := []row{
		{eventlog.KindToolCall, eventlog.DecisionAllow, "", "authorized"},
		{eventlog.KindToolCall, eventlog.DecisionNone, "", "http_200"},
		{eventlog.KindDenial, eventlog.DecisionDeny, "arguments_invalid", "refused"},
		{eventlog.KindTurnEnded, eventlog.DecisionNone, "", "end_turn"},
		{eventlog.KindProcessExited, eventlog.DecisionNone, "", "exit_0"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("log ends\n%v\nwant\n%v", got, want)
	}
}

// TestAgentCancel: Agent.Cancel sends session/cancel; the agent ends its
// turn cancelled (its pending permission request answered cancelled by
// the client), and the log records the turn's end as cancelled.
func TestAgentCancel(t *testing.T) {
	asked := make(chan struct{})
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Approver = runner.ApproverFunc(func(ctx context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
			close(asked)
			<-ctx.Done()
			return runner.Approval{}, ctx.Err()
		})
	})
	s := g.admitted(t)
	defer s.Close()
	ctx := context.Background()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan *acp.PromptResponse, 1)
	go func() {
		resp, err := a.Prompt(ctx, "go")
		if err != nil {
			t.Errorf("Prompt: %v", err)
		}
		prompted <- resp
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the Approver was never asked")
	}
	if err := a.Cancel(); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-prompted:
		if resp == nil || resp.StopReason != acp.StopCancelled {
			t.Fatalf("the turn ended %v, want cancelled", resp)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Cancel did not end the turn")
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The Approver's refusal, which ends when the cancel answers its
	// request, may land anywhere around the ends.
	var got []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindTurnEnded || r.Kind == eventlog.KindProcessExited {
			got = append(got, r)
		}
	}
	want := []row{{eventlog.KindTurnEnded, eventlog.DecisionNone, "", "cancelled"}, {eventlog.KindProcessExited, eventlog.DecisionNone, "", "exit_0"}}
	if !slices.Equal(got, want) {
		t.Fatalf("the log's ends %v, want %v", got, want)
	}
}

// TestCapabilityFreeSession: a Runner with no Connection launches an
// agent with no broker: no socket variable, no MCP server announced even
// with a door, no socket file; the turn ends and is logged, and nothing
// reaches a provider.
func TestCapabilityFreeSession(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Connections, c.Assignments = nil, nil })
	s := g.admitted(t)
	ctx := context.Background()
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript[:1]), Door: clitest.Door(t), OnUpdate: collect(&said)})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := a.Prompt(ctx, "go"); err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("Prompt = %v, %v", resp, err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || said[0] != "[scripted] cannot reach the broker: "+runnertest.SocketEnv+" is not set" {
		t.Fatalf("the agent said %q; want that it has no broker", said)
	}
	if g.hits.Load() != 0 {
		t.Fatal("a capability-free session reached the provider")
	}
	var ends []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindTurnEnded || r.Kind == eventlog.KindProcessExited || r.Kind == eventlog.KindProcessStarted {
			ends = append(ends, r)
		}
	}
	want := []row{{eventlog.KindProcessStarted, eventlog.DecisionAllow, "", "isolation_checked"},
		{eventlog.KindTurnEnded, eventlog.DecisionNone, "", "end_turn"}, {eventlog.KindProcessExited, eventlog.DecisionNone, "", "exit_0"}}
	if !slices.Equal(ends, want) {
		t.Fatalf("log %v, want %v", ends, want)
	}
}
