package runner_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// gateApprover is the approver the gated store looks for: the first
// record that names it (the envelope holds its approver field as it is)
// is the approval's decision.
const gateApprover = "user:gate-approver-7f3a"

// gatedStore holds the first append whose envelope holds match (an
// identifier field of the event, as it is) until release is closed,
// after closing booking: the Runner is then recording that event, and
// the test acts right there.
type gatedStore struct {
	eventlog.Store
	match   string
	booking chan struct{} // closed at the first append holding match
	release chan struct{}
	once    sync.Once
}

// newGatedStore returns a gated store over a memory store.
func newGatedStore(match string) *gatedStore {
	return &gatedStore{Store: eventlog.NewMemoryStore(), match: match, booking: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedStore) Append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) error {
	for _, r := range recs {
		if strings.Contains(string(r.Envelope), g.match) {
			g.once.Do(func() {
				close(g.booking)
				<-g.release
			})
		}
	}
	return g.Store.Append(ctx, session, expected, recs)
}

// TestCancelWhileBookingAnApprovalKeepsTheAnswer: a cancel that lands
// after the Runner decided to book an approval, while it is booking it
// (the log's append), does not turn the agent's answer into "cancelled":
// the Runner committed the answer before booking (acp.CommitPermission),
// so the agent is told what the log holds. Before, acp answered
// "cancelled" over the Runner's "allow", and the log held a live
// approval for a request the agent was told was cancelled.
func TestCancelWhileBookingAnApprovalKeepsTheAnswer(t *testing.T) {
	store := newGatedStore(gateApprover)
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Events = store
		c.Approver = runner.ApproverFunc(func(context.Context, runner.ApprovalRequest) (runner.Approval, error) {
			return runner.Approval{Approve: true, Approver: gateApprover}, nil
		})
	})
	s := g.admitted(t)
	defer s.Close()
	said := cancelWhileRecorded(t, s, agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}}), store)
	got := rows(entries(t, g.Runner, member.Session))
	if !slices.ContainsFunc(got, func(r row) bool {
		return r.Kind == eventlog.KindApprovalDecision && r.Decision == eventlog.DecisionAllow
	}) {
		t.Fatalf("the approval committed before the cancel is not booked: %v", got)
	}
	if !toldPermitted(said) {
		t.Fatalf("the log holds an approval, but the agent was not told it was permitted: said %q", said)
	}
}

// cancelWhileRecorded launches ps in s and prompts one turn; while store
// holds the record it waits for, it cancels the turn, then lets the
// record through. It checks that the turn ended cancelled, closes the
// agent, and returns what the agent said.
func cancelWhileRecorded(t *testing.T, s *runner.Session, ps adapters.ProcessSpec, store *gatedStore) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps, OnUpdate: collect(&said)})
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
	case <-store.booking:
	case <-ctx.Done():
		t.Fatal("the record the test waits for was never made")
	}
	if err := a.Cancel(); err != nil {
		t.Fatal(err)
	}
	close(store.release)
	if err := <-prompted; err != nil || resp.StopReason != acp.StopCancelled {
		t.Fatalf("Prompt after Cancel = %v, %v; want cancelled", resp, err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return said
}

// toldPermitted reports whether the scripted agent said it was permitted
// after the cancel.
func toldPermitted(said []string) bool {
	return slices.ContainsFunc(said, func(m string) bool { return strings.Contains(m, "permitted by the client after the cancel") })
}

// TestCancelWhileLoggingAnAllowKeepsTheAnswer: a permission request the
// Runner allows without the Approver (a read_only tool of the profile,
// or the agent's own read of its workspace) is logged as allowed; a
// cancel that lands while that is logged does not turn the agent's
// answer into "cancelled", since the Runner committed the answer first
// (acp.CommitPermission). Before, the log said allow and the agent was
// told "cancelled".
func TestCancelWhileLoggingAnAllowKeepsTheAnswer(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name, match string
		step        runnertest.Step
	}{
		{"read_only", runner.ResultReadOnlyPermission, runnertest.Step{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true}},
		{"workspace_read", string(runner.CodeWorkspaceReadPermission), runnertest.Step{Tool: "Read main.go", Kind: "read", Locations: []string{root + "/main.go"}, Ask: true, Own: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newGatedStore(c.match)
			g := newRig(t, func(cfg *runner.Config, _ *rig) { cfg.Events = store })
			s := g.admitted(t)
			defer s.Close()
			ps := agentSpec(t, []runnertest.Step{c.step})
			ps.Dir = root
			said := cancelWhileRecorded(t, s, ps, store)
			got := rows(entries(t, g.Runner, member.Session))
			allowed := slices.ContainsFunc(got, func(r row) bool { return r.Kind == eventlog.KindSkip && r.Decision == eventlog.DecisionAllow })
			if !allowed || !toldPermitted(said) {
				t.Fatalf("the log allows the request: %v; the agent was told so: %v (said %q; log %v)", allowed, toldPermitted(said), said, got)
			}
		})
	}
}

// procTap is a Provider whose instances hand each process they open to
// procs, so that a test can end it.
type procTap struct {
	runner.Provider
	procs chan adapters.Process
}

type tapInstance struct {
	adapters.Instance
	procs chan adapters.Process
}

func (p procTap) Create(ctx context.Context, s adapters.InstanceSpec) (adapters.Instance, error) {
	i, err := p.Provider.Create(ctx, s)
	if err != nil {
		return nil, err
	}
	return tapInstance{i, p.procs}, nil
}

func (i tapInstance) OpenProcess(ctx context.Context, s adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.Instance.OpenProcess(ctx, s)
	if err == nil {
		i.procs <- p
	}
	return p, err
}

func (i tapInstance) WorkDir() string { return i.Instance.(interface{ WorkDir() string }).WorkDir() }

// sawResult is a slog handler that closes seen the first time the
// Runner logs an operator line whose result is want.
type sawResult struct {
	want string
	seen chan struct{}
	once *sync.Once
}

func (h sawResult) Enabled(context.Context, slog.Level) bool { return true }
func (h sawResult) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h sawResult) WithGroup(string) slog.Handler            { return h }
func (h sawResult) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "result" && a.Value.String() == h.want {
			h.once.Do(func() { close(h.seen) })
		}
		return true
	})
	return nil
}

// TestClientEndWhileBookingLogsWhatTheBookHolds: the agent's client ends
// (here the agent exits; a malformed line or a spent refusal budget does
// the same) while a committed approval's decision is being logged. The
// approval is booked and logged whole. Before, the end cancelled the
// booking's context: the log's append went on while Decide returned
// context.Canceled, so the log held "approved" for an approval the book
// never held, followed by a denial saying it went unrecorded.
func TestClientEndWhileBookingLogsWhatTheBookHolds(t *testing.T) {
	store := newGatedStore(gateApprover)
	procs, asked := make(chan adapters.Process, 1), make(chan context.Context, 1)
	refused := sawResult{want: string(runner.CodeRefusedApproval), seen: make(chan struct{}), once: &sync.Once{}}
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Events, c.Logger = store, slog.New(refused)
		c.Provider = procTap{runner.Process(), procs}
		c.Approver = runner.ApproverFunc(func(ctx context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
			asked <- ctx
			return runner.Approval{Approve: true, Approver: gateApprover}, nil
		})
	})
	s := g.admitted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})})
	if err != nil {
		t.Fatal(err)
	}
	proc := <-procs
	go a.Prompt(ctx, "go")
	permission := <-asked
	select {
	case <-store.booking:
	case <-ctx.Done():
		t.Fatal("the approval was never booked")
	}
	proc.Kill() // the agent exits: its client ends
	<-permission.Done()
	// A Runner that gave up the booking logs its refusal at once; one
	// that books it whole waits for the append. Wait for the first, not
	// longer than the second needs to show itself.
	select {
	case <-refused.seen:
	case <-time.After(3 * time.Second):
	}
	close(store.release)
	a.Close(ctx)
	s.Close()
	got := rows(entries(t, g.Runner, member.Session))
	approved := slices.ContainsFunc(got, func(r row) bool {
		return r.Kind == eventlog.KindApprovalDecision && r.Decision == eventlog.DecisionAllow
	})
	unrecorded := slices.ContainsFunc(got, func(r row) bool { return r.Result == string(runner.CodeRefusedApproval) })
	if !approved || unrecorded {
		t.Fatalf("the log holds the approval: %v, and a denial saying it was not recorded: %v; want the first only: %v", approved, unrecorded, got)
	}
}
