package runner_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// fakeClock is a refusal clock whose sleep moves it on, and sums what
// was slept.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
	return nil
}

func (c *fakeClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// flood is n permission requests the Runner denies: each names a tool the
// profile does not hold, or, with foreign, a session the agent's client
// never created (which acp denies alone).
func flood(n int, foreign bool) []runnertest.Step {
	var script []runnertest.Step
	for range n {
		st := runnertest.Step{Tool: "delete_repo", Arguments: map[string]any{}, Ask: true}
		if foreign {
			st.Session = "someone-else"
		}
		script = append(script, st)
	}
	return script
}

// denials returns the session's denials with result prefix, as rows.
func denials(t *testing.T, g *rig, prefix string) []row {
	t.Helper()
	var out []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindDenial && strings.HasPrefix(r.Result, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// TestRefusalFloodIsCoalesced: a permission loop under the budget leaves
// one full record and one counted record for its identical refusals,
// paced at RefusalsPerSecond once the burst is spent; a burst of exactly
// RefusalsPerSecond waits for nothing. Refusals acp decides alone (a
// foreign session) reach the log the same way.
func TestRefusalFloodIsCoalesced(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		foreign bool
		result  string
		code    string
	}{
		{"burst", runner.RefusalsPerSecond, false, "refused_permission", string(runner.CodePermissionUnbound)},
		{"over the burst", runner.RefusalsPerSecond + 24, false, "refused_permission", string(runner.CodePermissionUnbound)},
		{"decided by acp", runner.RefusalsPerSecond + 1, true, "refused_acp_permission", string(acp.CodePermissionSessionUnknown)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil)
			s := g.admitted(t)
			clock := &fakeClock{now: time.Unix(1e9, 0)}
			runner.SetRefusalClock(s, clock.Now, clock.Sleep)
			turn(t, s, flood(tt.n, tt.foreign))
			got := denials(t, g, tt.result)
			want := []row{
				{eventlog.KindDenial, eventlog.DecisionDeny, tt.code, tt.result},
				{eventlog.KindDenial, eventlog.DecisionDeny, tt.code, tt.result + "_repeated_" + itoa(tt.n-1)},
			}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("denials %v, want %v", got, want)
			}
			if g.approvals.Load() != 0 {
				t.Fatalf("the Approver was asked %d times", g.approvals.Load())
			}
			// The waits, on the fake clock: none for the burst, then
			// one refusal's worth for each past it.
			over := max(tt.n-runner.RefusalsPerSecond, 0)
			want0 := time.Duration(over) * time.Second / runner.RefusalsPerSecond
			if d := clock.Slept(); d < want0-time.Millisecond || d > want0+time.Millisecond || (over == 0) != (d == 0) {
				t.Fatalf("%d refusals waited %s on the refusal clock, want %s", tt.n, d, want0)
			}
		})
	}
}

// TestRefusalBudgetClosesTheChannel: the refusal that spends MaxRefusals
// is followed by one refused_budget record; the agent's ACP client is
// closed (its turn fails), nothing more is recorded, and the counts of
// the coalesced refusals are in the log.
func TestRefusalBudgetClosesTheChannel(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	runner.SetRefusalClock(s, clock.Now, clock.Sleep)
	ctx := context.Background()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, flood(runner.MaxRefusals+8, false)), Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, "go"); err == nil {
		t.Fatal("the agent's turn went on past the refusal budget")
	}
	a.Close(ctx)
	got := denials(t, g, "refused_")
	want := []row{
		{eventlog.KindDenial, eventlog.DecisionDeny, string(runner.CodePermissionUnbound), "refused_permission"},
		{eventlog.KindDenial, eventlog.DecisionDeny, string(runner.CodePermissionUnbound), "refused_permission_repeated_" + itoa(runner.MaxRefusals-1)},
		{eventlog.KindDenial, eventlog.DecisionDeny, string(runner.CodeAgentRefusalsExceeded), "refused_budget"},
	}
	if len(got) != len(want) {
		t.Fatalf("denials %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("denials %v, want %v", got, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// repeats is how many refusals a denial's result stands for: n for a
// coalesced "<result>_repeated_<n>", else 1.
func repeats(result string) int {
	if _, n, ok := strings.Cut(result, "_repeated_"); ok {
		if v, err := strconv.Atoi(n); err == nil {
			return v
		}
	}
	return 1
}

// TestEachAgentHasItsOwnChannel: each agent of a session gets a gateway
// channel and a broker of its own, closed with it. An agent that spends
// its broker's refusal budget (broker.MaxRefusals refused calls) closes
// its own channel, not the next agent's: the next agent's call reaches
// the upstream.
func TestEachAgentHasItsOwnChannel(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	var hidden []runnertest.Step
	for range broker.MaxRefusals + 1 {
		hidden = append(hidden, runnertest.Step{Tool: "delete_repo", Arguments: map[string]any{}})
	}
	turn(t, s, hidden)
	if g.hits.Load() != 0 {
		t.Fatalf("a hidden tool reached the upstream %d times", g.hits.Load())
	}
	said := turn(t, s, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}})
	if g.hits.Load() != 1 {
		t.Fatalf("the second agent's call reached the upstream %d times, want 1; it said %q", g.hits.Load(), said)
	}
}

// TestEachAgentHasItsOwnLease: each agent's calls are authorized against
// a lease of its own, issued at its Launch and revoked at its close, so
// one agent spends nothing of another's.
func TestEachAgentHasItsOwnLease(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	call := []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}}
	turn(t, s, call)
	turn(t, s, call)
	var grants []string
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindToolCall && e.Decision == eventlog.DecisionAllow {
			grants = append(grants, e.Grant)
		}
	}
	if len(grants) != 2 || grants[0] == "" || grants[0] == grants[1] {
		t.Fatalf("the two agents' allowed calls carry leases %q, want two distinct", grants)
	}
	for _, id := range grants {
		if n, err := runner.LeaseRemaining(s, id); err != nil || n != 0 {
			t.Fatalf("a closed agent's lease has %d uses left (%v), want it revoked", n, err)
		}
	}
}

// TestEveryEventNamesItsAgentsChannel: two agents of one session, one
// after the other. Each agent's process_started names its channel, the
// two channels differ, and every event from it to the agent's
// process_exited names that channel and no other: the gateway's records
// of its calls (allowed, and refused for a hidden tool), the approval of
// its permission request and the approved call's result, acp's refusal
// of a request naming a foreign session and the count of its repeat, the
// end of its turn. A reader puts each call in its
// agent's window by the channel it names, not by time.
func TestEveryEventNamesItsAgentsChannel(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	list := runnertest.Step{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}
	turn(t, s, []runnertest.Step{
		list,
		{Tool: "delete_repo", Arguments: map[string]any{}},
		{Tool: "create_issue", Arguments: map[string]any{"title": "bug"}, Ask: true},
		{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Session: "sess-foreign"},
		{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Session: "sess-foreign"},
	})
	turn(t, s, []runnertest.Step{list})
	var channels []string
	cur := ""
	counts := map[string]int{}
	for _, e := range entries(t, g.Runner, member.Session) {
		switch {
		case e.Kind == eventlog.KindProcessStarted:
			if cur != "" {
				t.Fatalf("seq %d: a process started inside channel %s's window", e.Seq, cur)
			}
			if e.Channel == "" || slices.Contains(channels, e.Channel) {
				t.Fatalf("seq %d: process_started names channel %q after %q", e.Seq, e.Channel, channels)
			}
			cur = e.Channel
			channels = append(channels, cur)
		case cur == "":
			continue // the session's own events, outside any agent's window
		case e.Channel != cur:
			t.Errorf("seq %d (%s %s %s) in channel %s's window names channel %q", e.Seq, e.Kind, e.Result, e.Code, cur, e.Channel)
		}
		if cur != "" {
			counts[e.Kind.String()+"/"+e.Decision.String()]++
		}
		if e.Kind == eventlog.KindProcessExited {
			cur = ""
		}
	}
	if len(channels) != 2 || cur != "" {
		t.Fatalf("agents' channels %q, last window open: %q", channels, cur)
	}
	// Both agents' allowed calls, the first's approval and refusals were
	// in the windows: the check above looked at them.
	if counts["tool_call/allow"] < 3 || counts["denial/deny"] < 3 || counts["approval_decision/allow"] != 1 || counts["approval_result/none"] != 1 {
		t.Errorf("events in the agents' windows by kind: %v", counts)
	}
}
