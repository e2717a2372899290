package admission_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/admission"
)

// TestAgentHarnesses: each third-party agent is an available ACP entry of
// the default catalog, and its rendered launch points it at the door's
// model URL with the placeholder key and nothing else that looks like a
// key, writes only under the session's private HOME, sets HOME to it, and
// carries the opt-outs it names.
func TestAgentHarnesses(t *testing.T) {
	c := admission.DefaultHarnessCatalog()
	names := admission.Agents()
	if !slices.Equal(names, []string{"claude-code", "codex", "gemini-cli", "opencode"}) {
		t.Fatalf("Agents() = %v", names)
	}
	const home, url = "/sandbox/home", "http://127.0.0.1:41100"
	for _, name := range names {
		if e, err := c.Launch(name); err != nil || e.Protocol != admission.ProtocolACPv1 {
			t.Errorf("%s: %v, %v", name, e, err)
		}
		a, _ := admission.Agent(name)
		r := a.Render("/opt/agents", home, url)
		all := strings.Join(r.Argv, " ") + "\n" + strings.Join(r.Env, "\n")
		for _, c := range r.Files {
			all += "\n" + c
		}
		for _, ph := range []string{"{install}", "{home}", "{model_url}", "{model}", "{key}"} {
			if strings.Contains(all, ph) {
				t.Errorf("%s: placeholder %s left unfilled", name, ph)
			}
		}
		if !strings.Contains(all, url) {
			t.Errorf("%s: not pointed at the door's model URL", name)
		}
		// A pinned model is the one the launch asks for.
		if a.Model != "" && !strings.Contains(all, a.Model) {
			t.Errorf("%s: pinned to %q, which the launch never names", name, a.Model)
		}
		// Every entry pins its model: the model route serves each
		// entry's dialect (Gemini's names the model in its path).
		if a.Model == "" {
			t.Errorf("%s: pins no model for dialect %s", name, a.Dialect)
		}
		if !slices.Contains(r.Env, "HOME="+home) {
			t.Errorf("%s: HOME is not the session's private home: %v", name, r.Env)
		}
		for p := range r.Files {
			if rel, err := filepath.Rel(home, p); err != nil || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
				t.Errorf("%s: writes %s outside HOME", name, p)
			}
		}
		// Every key-like setting holds the placeholder and nothing else.
		for _, kv := range r.Env {
			k, v, _ := strings.Cut(kv, "=")
			if strings.Contains(k, "KEY") && v != admission.PlaceholderKey {
				t.Errorf("%s: %s is not the placeholder", name, k)
			}
		}
		if name != "codex" && name != "opencode" && !strings.Contains(all, admission.PlaceholderKey) {
			t.Errorf("%s: the placeholder key is not given", name)
		}
		for _, o := range a.OptOuts {
			last := o[strings.LastIndex(o, ".")+1:]
			if !strings.Contains(all, last) {
				t.Errorf("%s: opt-out %s is not set", name, o)
			}
		}
		if tool, _ := a.Tool("checkfu", "list_issues"); !strings.Contains(tool, "list_issues") {
			t.Errorf("%s: tool name %q", name, tool)
		}
	}
	claude, _ := admission.Agent("claude-code")
	if n, ns := claude.Tool("checkfu", "list_issues"); n != "mcp__checkfu__list_issues" || ns != "" {
		t.Errorf("claude-code tool name %q %q", n, ns)
	}
	codex, _ := admission.Agent("codex")
	if n, ns := codex.Tool("checkfu", "list_issues"); n != "list_issues" || ns != "mcp__checkfu" {
		t.Errorf("codex tool name %q %q", n, ns)
	}
	// How each names a tool in its permission requests, as observed with
	// the pinned versions: Claude Code by the model's name; codex-acp
	// by the title of the tool call it announced first.
	if p := claude.Permission("checkfu", "list_issues"); p != "mcp__checkfu__list_issues" || claude.PermissionByToolCall {
		t.Errorf("claude-code permission title %q, by tool call %v", p, claude.PermissionByToolCall)
	}
	if p := codex.Permission("checkfu", "list_issues"); p != "Tool: checkfu/list_issues" || !codex.PermissionByToolCall || codex.PermissionArguments != "arguments" {
		t.Errorf("codex permission title %q, by tool call %v, arguments %q", p, codex.PermissionByToolCall, codex.PermissionArguments)
	}
	if _, ok := admission.Agent("claude"); ok {
		t.Error("an unknown agent was found")
	}
}
