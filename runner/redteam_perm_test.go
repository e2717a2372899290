package runner_test

import (
	"slices"
	"testing"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestUnannouncedToolDressedAsReadReachesNothing (red team, held): a
// codex-like agent asks "Approve MCP tool call" under an id it never
// announced (or one forgotten past MaxNotedToolCalls), as a read inside
// its workspace, and then calls create_issue. The Runner cannot tell the
// request names a profile tool and allows it as a workspace read, which
// is consent only: the Approver is never asked, no approval is recorded,
// and the call itself is refused by the gateway (approval_required)
// without the upstream seeing it.
func TestUnannouncedToolDressedAsReadReachesNothing(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	codex, _ := admission.Agent("codex")
	root := t.TempDir()
	said := playOwnWith(t, s, root, runner.LaunchConfig{Agent: &codex}, []runnertest.Step{
		{Tool: "create_issue", Arguments: map[string]any{"title": "x"}, Ask: true, Title: "Approve MCP tool call", Kind: "read", Locations: []string{root + "/a"}},
	})
	if !slices.Contains(said, "[scripted] create_issue -> permitted by the client") {
		t.Fatalf("the agent said %q", said)
	}
	if !slices.Contains(said, "[scripted] create_issue -> refused: approval_required") {
		t.Errorf("the call was not refused approval_required; the agent said %q", said)
	}
	if g.approvals.Load() != 0 || g.hits.Load() != 0 {
		t.Fatalf("approver asked %d times, upstream hit %d times", g.approvals.Load(), g.hits.Load())
	}
	var read, refused int
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindSkip && e.Result == string(runner.CodeWorkspaceReadPermission) {
			read++
		}
		if e.Kind == eventlog.KindDenial && e.Code == "approval_required" {
			refused++
		}
	}
	if read != 1 || refused != 1 {
		t.Errorf("log: %d workspace reads, %d approval_required denials; want 1 and 1", read, refused)
	}
}
