package runner_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// ownReads is a turn of an agent asking permission for its own tools
// under the workspace root, as a third-party agent does: two reads
// inside it, then a read outside, a ".." escape, a read naming nothing,
// a shell and an edit.
func ownReads(root string) []runnertest.Step {
	return []runnertest.Step{
		{Tool: "Read main.go", Kind: "read", Locations: []string{root + "/main.go"}, Ask: true, Own: true},
		{Tool: "Grep TODO", Kind: "search", Locations: []string{root, root + "/src"}, Ask: true, Own: true},
		{Tool: "Read /etc/passwd", Kind: "read", Locations: []string{"/etc/passwd"}, Ask: true, Own: true},
		{Tool: "Read ../x", Kind: "read", Locations: []string{root + "/../x"}, Ask: true, Own: true},
		{Tool: "Read nothing", Kind: "read", Ask: true, Own: true},
		{Tool: "Bash ls", Kind: "execute", Locations: []string{root}, Ask: true, Own: true},
		{Tool: "Write main.go", Kind: "edit", Locations: []string{root + "/main.go"}, Ask: true, Own: true},
	}
}

// playOwn launches the scripted agent in root playing script, plays one
// turn and returns what it said.
func playOwn(t *testing.T, s *runner.Session, root string, script []runnertest.Step) []string {
	t.Helper()
	return playOwnWith(t, s, root, runner.LaunchConfig{}, script)
}

// playOwnWith is playOwn with cfg's other fields.
func playOwnWith(t *testing.T, s *runner.Session, root string, cfg runner.LaunchConfig, script []runnertest.Step) []string {
	t.Helper()
	ps := agentSpec(t, script)
	ps.Dir = root
	cfg.Stderr = os.Stderr
	a, said := launchTurn(t, s, cfg, ps)
	if a.Cwd() != root {
		t.Fatalf("cwd %q, want %q", a.Cwd(), root)
	}
	return said
}

// checkPutToApprover checks that the turn's one permission request,
// a profile tool dressed as a read inside the workspace, went to the
// Approver and was never allowed as a workspace read.
func checkPutToApprover(t *testing.T, g *rig, said []string) {
	t.Helper()
	if g.approvals.Load() != 1 {
		t.Fatalf("approver asked %d times, want 1; the agent said %q", g.approvals.Load(), said)
	}
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Result == string(runner.CodeWorkspaceReadPermission) {
			t.Fatalf("a profile tool was allowed as a workspace read: %v", rows([]eventlog.Entry{e}))
		}
	}
}

// checkOwnReads checks the turn of ownReads: the two reads inside were
// allowed and logged as workspace_read_permission, the five others
// denied with permission_unbound, and the Approver never asked.
func checkOwnReads(t *testing.T, g *rig, said []string, says func(tool string, ok bool) string) {
	t.Helper()
	for i, st := range ownReads("/r") {
		want := says(st.Tool, i < 2)
		if !slices.Contains(said, "[scripted] "+want) {
			t.Errorf("the agent did not say %q; it said %q", want, said)
		}
	}
	if g.approvals.Load() != 0 || g.hits.Load() != 0 {
		t.Fatalf("approver asked %d times, upstream hit %d times", g.approvals.Load(), g.hits.Load())
	}
	var allowed, denied int
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindSkip && e.Result == string(runner.CodeWorkspaceReadPermission) && e.Decision == eventlog.DecisionAllow {
			allowed++
		}
		if e.Kind == eventlog.KindDenial && e.Code == string(runner.CodePermissionUnbound) {
			denied += repeats(e.Result)
		}
	}
	if allowed != 2 || denied != 5 {
		t.Fatalf("%d workspace reads allowed and %d denied in the log, want 2 and 5; the agent said %q", allowed, denied, said)
	}
}

// TestPermissionWorkspaceRead: an agent's own read, search or think
// inside the workspace root is allowed without the Approver and logged;
// a location outside, a ".." element, a read naming no location, a
// shell or an edit is denied, and the Approver is never asked.
func TestPermissionWorkspaceRead(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	root := t.TempDir()
	said := playOwn(t, s, root, ownReads(root))
	checkOwnReads(t, g, said, func(tool string, ok bool) string {
		if ok {
			return tool + " -> permitted by the client"
		}
		return tool + " -> not permitted by the client"
	})
}

// TestCapabilityFreeWorkspaceRead: a session with no tool decides its
// agent's own reads the same way.
func TestCapabilityFreeWorkspaceRead(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Connections, c.Assignments = nil, nil })
	s := g.admitted(t)
	root := t.TempDir()
	said := playOwn(t, s, root, ownReads(root))
	checkOwnReads(t, g, said, func(tool string, ok bool) string {
		return fmt.Sprintf("%s -> permitted by the client: %t (no broker to call it through)", tool, ok)
	})
}

// TestProfileToolDressedAsRead: a request naming an external_effect tool
// of the profile is put to the Approver even when its kind and locations
// read as a workspace read; the agent's word on kind decides only for
// its own tools.
func TestProfileToolDressedAsRead(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	root := t.TempDir()
	said := playOwn(t, s, root, []runnertest.Step{
		{Tool: "create_issue", Arguments: map[string]any{"title": "x"}, Kind: "read", Locations: []string{root + "/a"}, Ask: true},
	})
	checkPutToApprover(t, g, said)
}

// TestWorkspaceRootFallback: the fallback cwd Cwd, which nothing named,
// is no workspace root; a cwd the spec or the instance named is.
func TestWorkspaceRootFallback(t *testing.T) {
	if got := runner.WorkspaceRoot(runner.Cwd); got != "" {
		t.Errorf("WorkspaceRoot(Cwd) = %q, want none", got)
	}
	if got := runner.WorkspaceRoot("/work/ws"); got != "/work/ws" {
		t.Errorf("WorkspaceRoot(/work/ws) = %q", got)
	}
	if ok, _ := runner.WorkspaceRead(runner.WorkspaceRoot(runner.Cwd), "read", []string{runner.Cwd + "/a"}); ok {
		t.Error("a read under the fallback cwd was allowed")
	}
}

// TestHarnessToolDressedAsRead: for an agent launched from a harness
// entry, a request naming a profile tool as its model sees it
// (mcp__checkfu__create_issue) is a profile tool too: dressed as a read
// inside the workspace, it is still put to the Approver.
func TestHarnessToolDressedAsRead(t *testing.T) {
	claude, _ := admission.Agent("claude-code")
	g := modelRig(t, &runnertest.Model{}, "claude-sonnet-4-5")
	s := g.admitted(t)
	root := t.TempDir()
	title, _ := claude.Tool(runner.MCPServerName, "create_issue")
	said := playOwnWith(t, s, root, runner.LaunchConfig{Door: clitest.Door(t), Agent: &claude, Install: t.TempDir()}, []runnertest.Step{
		{Tool: "create_issue", Title: title, Arguments: map[string]any{"title": "x"}, Kind: "read", Locations: []string{root + "/a"}, Ask: true},
	})
	checkPutToApprover(t, g, said)
}

// TestAnnouncedToolDressedAsRead: for an agent whose harness binds
// permission requests by the tool call it announced (codex-acp), a
// request naming no tool whose announced call names an external_effect
// tool of the profile is a profile tool: dressed as a read inside the
// workspace, it is still put to the Approver.
func TestAnnouncedToolDressedAsRead(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	codex, _ := admission.Agent("codex")
	root := t.TempDir()
	said := playOwnWith(t, s, root, runner.LaunchConfig{Agent: &codex}, []runnertest.Step{
		{Tool: "create_issue", Arguments: map[string]any{"title": "x"}, Ask: true, Title: "Approve MCP tool call",
			Announce: codex.Permission(runner.MCPServerName, "create_issue"), Kind: "read", Locations: []string{root + "/a"}},
	})
	checkPutToApprover(t, g, said)
}
