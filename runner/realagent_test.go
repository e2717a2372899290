package runner_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway/modelroute"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// realAgent returns the command of a pinned third-party agent from
// envName (set by .ci/setup.d/50-real-agents.sh) and its install
// directory. Unset, the test is skipped on a developer's machine and
// fails in CI (CI set), so CI can never skip it silently.
func realAgent(t *testing.T, envName string) ([]string, string) {
	t.Helper()
	cmd := strings.Fields(os.Getenv(envName))
	if len(cmd) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set in CI: .ci/setup.d/50-real-agents.sh installs the pinned agents", envName)
		}
		t.Skipf("%s is not set: source .ci/setup.d/50-real-agents.sh (or /work/dev/agents-env.sh) to run the pinned agent", envName)
	}
	return cmd, os.Getenv("CHECKFU_TEST_AGENTS_DIR")
}

// TestClaudeCodeThroughTheDoor runs a real third-party agent, Claude
// Code's ACP adapter as pinned by .ci/agents (@zed-industries/claude-code-acp
// 0.16.2), through the Runner on the process provider for one turn. Its
// model is the scripted model server (a mock), reached only through the
// door's model route; its tool is the session's list_issues, announced
// in session/new mcpServers as the door's stdio MCP server, whose
// upstream (a mock) sees the tool credential attached at the edge. The
// agent is real; the model and the upstreams are mocks; the sandbox is a
// plain process (no isolation).
//
// It checks: the model server saw the model key on every request, never
// the placeholder; the agent called mcp__checkfu__list_issues, the call
// reached the upstream, and its result went back to the model; it then
// tried mcp__checkfu__create_issue, which the member holds no assignment
// for: the Runner refused its permission request (permission_missing,
// logged) and the upstream never saw it; the turn ended (for Codex, with
// the model's final text); Claude Code's count_tokens request was
// served by the route (no model_path_refused denial) and settled with
// no tokens charged; neither the model key nor the tool
// credential is in the agent's environment and argv (as the door started
// it), the files of its private HOME, anything it sent over ACP, or the
// log; the log holds the tool call, the model calls and the turn's end.
func TestClaudeCodeThroughTheDoor(t *testing.T) {
	realTurn(t, realCase{envName: "CHECKFU_TEST_CLAUDE_ACP", harness: "claude-code", dialect: modelroute.AnthropicMessages, refusalEndsTurn: true, countsTokens: true})
}

// TestCodexThroughTheDoor is TestClaudeCodeThroughTheDoor for Codex's
// ACP adapter as pinned by .ci/agents (@zed-industries/codex-acp 0.16.0):
// OpenAI Responses, its base URL in the config.toml of its private HOME
// (the harness entry's file), its MCP tools inside the namespace tool
// mcp__checkfu.
func TestCodexThroughTheDoor(t *testing.T) {
	realTurn(t, realCase{envName: "CHECKFU_TEST_CODEX_ACP", harness: "codex", dialect: modelroute.OpenAIResponses})
}

// TestGeminiCLIThroughTheDoor is TestClaudeCodeThroughTheDoor for Gemini
// CLI as pinned by .ci/agents (@google/gemini-cli 0.61.0, --acp), started
// by its harness entry's own argv (with --model): the Gemini API, the
// model named in the path, its base URL in GOOGLE_GEMINI_BASE_URL, its
// MCP tools named mcp_checkfu_{tool}. CHECKFU_TEST_GEMINI_CLI names its
// gemini.js under CHECKFU_TEST_AGENTS_DIR.
func TestGeminiCLIThroughTheDoor(t *testing.T) {
	_, install := realAgent(t, "CHECKFU_TEST_GEMINI_CLI")
	realTurn(t, realCase{envName: "CHECKFU_TEST_GEMINI_CLI", harness: "gemini-cli", dialect: modelroute.Gemini, argv: []string{}, install: install, refusalToModel: "was canceled by the user"})
}

// A realCase is a pinned real agent's turn: the variable naming its
// command, its harness entry (whose pinned model is the one model the
// route allows) and the dialect it speaks.
type realCase struct {
	envName, harness string
	dialect          modelroute.Dialect
	// refusalEndsTurn: the agent ends its turn when a permission
	// request is refused, without telling its model.
	refusalEndsTurn bool
	// refusalToModel, when set, is what the agent tells its model of a
	// refused permission, in place of reporting the call failed over
	// ACP (Gemini CLI: the tool "was canceled by the user").
	refusalToModel string
	// countsTokens: the agent sends count_tokens requests (Claude Code,
	// POST /v1/messages/count_tokens?beta=true), which the route serves.
	countsTokens bool
	// argv and install, when set, replace what envName names; provider,
	// when set, is the sandbox provider (process otherwise), admitted
	// with the network policy profile.
	argv     []string
	install  string
	provider runner.Provider
	profile  string
}

// realTurn runs c's agent for one turn; see TestClaudeCodeThroughTheDoor.
func realTurn(t *testing.T, c realCase) {
	argv, install := c.argv, c.install
	if argv == nil {
		argv, install = realAgent(t, c.envName)
	}
	if len(argv) == 0 {
		argv = nil // the harness entry's own argv
	}
	agent, ok := admission.Agent(c.harness)
	if !ok {
		t.Fatalf("no %s harness entry", c.harness)
	}
	// The script: list_issues (allowed, credentialed), then create_issue,
	// which the member holds no assignment for: refused at the agent's
	// permission request, before the broker.
	list, listNS := agent.Tool(runner.MCPServerName, "list_issues")
	create, createNS := agent.Tool(runner.MCPServerName, "create_issue")
	m := &runnertest.Model{Calls: []runnertest.ToolUse{
		{Tool: list, Namespace: listNS, Arguments: map[string]any{"state": "open"}},
		{Tool: create, Namespace: createNS, Arguments: map[string]any{"title": "filed by a real agent"}},
	}}
	g := dialectRig(t, m, c.dialect, func(cfg *runner.Config) {
		cfg.Assignments = slices.DeleteFunc(cfg.Assignments, func(a authz.PermissionAssignment) bool { return a.Capability == "issues.create" })
		if c.provider != nil {
			cfg.Provider = c.provider
		}
	}, agent.Model)
	var s *runner.Session
	if c.profile == "" {
		s = g.admitted(t)
	} else {
		s = g.session(t)
		v, err := s.Publish(context.Background(), profileDoc(c.profile), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Admit(context.Background(), v, laneTrusted, provenance); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	stderr := &syncBuffer{} // the agent's stderr copier writes while the test reads
	// marker finds the agent's processes (the door's children inherit
	// it; an MCP server started with a scrubbed environment does not).
	marker := "CHECKFU_TEST_REAL_AGENT=" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var said []string
	var updates bytes.Buffer
	onUpdate := func(n acp.SessionNotification) {
		b, _ := json.Marshal(n)
		updates.Write(append(b, '\n'))
		collect(&said)(n)
	}
	a, err := s.Launch(ctx, runner.LaunchConfig{
		Process: adapters.ProcessSpec{Argv: argv, Env: []string{marker}},
		Door:    clitest.Door(t), Agent: &agent, Install: install, Stderr: stderr, OnUpdate: onUpdate,
	})
	if err != nil {
		t.Fatalf("Launch: %v\nstderr: %s", err, stderr.String())
	}
	resp, err := a.Prompt(ctx, "List the open issues with the list_issues tool.")
	home := a.Home()
	files := homeFiles(t, home)
	env := procEnviron(t, marker)
	if cerr := a.Close(context.Background()); cerr != nil {
		t.Logf("Close: %v", cerr)
	}
	jailed, inJail := c.provider.(*inspectedJail)
	if inJail {
		// The agent's HOME is the jail's workspace: every file it left
		// there, read from inside a jail of the same instance.
		files = jailed.workspaceFiles(t)
	}
	rowsOf := func() string {
		var out []string
		for _, e := range entries(t, g.Runner, member.Session) {
			out = append(out, fmt.Sprintf("%s %s %s %s %s", e.Kind, e.Decision, e.Code, e.Result, e.Tool.Name))
		}
		return strings.Join(out, "\n")
	}
	if err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("Prompt = %v, %v\nlog:\n%s\nmodel requests: %d\nstderr: %s", resp, err, rowsOf(), len(m.Received()), stderr.String())
	}
	got := m.Received()
	var replies []string
	for _, r := range got {
		replies = append(replies, r.Reply)
	}
	t.Logf("model requests (%d): %v", len(got), replies)
	for i, r := range got {
		var b struct {
			Model    string
			Messages []any
			Tools    []any
		}
		json.Unmarshal(r.Body, &b)
		t.Logf("model request %d: %s %s?%s model %s, %d messages, %d tools, reply %s", i+1, r.Method, r.Path, r.RawQuery, b.Model, len(b.Messages), len(b.Tools), r.Reply)
	}
	checkModelUpstream(t, got, c.dialect)
	// Claude Code ends its turn when a permission is refused, so its
	// model never hears of the refused call; Codex reports it to the
	// model, which answers with the final text.
	want := "tool tool final"
	if c.refusalEndsTurn {
		want = "tool tool"
	}
	if !strings.HasSuffix(strings.Join(replies, " "), want) {
		t.Errorf("the model replies %v; want them to end %q", replies, want)
	}
	if c.refusalToModel != "" {
		if last := got[len(got)-1].Body; !bytes.Contains(last, []byte(create)) || !bytes.Contains(last, []byte(c.refusalToModel)) {
			t.Error("the agent never told its model the create_issue call was refused")
		}
	} else if !strings.Contains(updates.String(), `"status":"failed"`) || !strings.Contains(updates.String(), "create_issue") {
		t.Error("the agent never reported the refused create_issue call as failed")
	}
	// The result, however many times the agent quoted it.
	if last := got[len(got)-1]; !bytes.Contains(bytes.ReplaceAll(last.Body, []byte(`\`), nil), []byte(`{"issues":[1]}`)) {
		t.Errorf("the tool's result did not reach the model: %s", last.Body)
	}
	if g.hits.Load() != 1 {
		t.Errorf("the tool's upstream got %d calls with the credential, want 1", g.hits.Load())
	}
	if !c.refusalEndsTurn && !strings.Contains(updates.String(), runnertest.ModelFinal) {
		t.Errorf("the agent never relayed the model's final text; updates:\n%s", updates.String())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The log verifies, and each model call, tool call and denial the
	// agent caused carries the session's request context.
	if head, err := s.Verify(context.Background()); err != nil || head.Seq == 0 {
		t.Errorf("Verify = %v, %v", head, err)
	}
	for _, e := range entries(t, g.Runner, member.Session) {
		if (e.Kind == eventlog.KindToolCall || e.Kind == eventlog.KindSettlement || e.Kind == eventlog.KindDenial) &&
			(e.Actor != member.Actor || e.SessionID != member.Session || e.Tenant != member.Tenant || e.Project != member.Project) {
			t.Errorf("%s %s %s lacks the request context: actor %q session %q", e.Kind, e.Result, e.Tool.Name, e.Actor, e.SessionID)
		}
	}
	seen := map[string][]byte{"what the agent sent over ACP": updates.Bytes(), "the agent's stderr": []byte(stderr.String()), "the agent's environment and argv": env}
	for f, b := range files {
		seen["the file "+f] = b
	}
	log := rowsOf()
	t.Logf("log:\n%s", log)
	var full []string
	for _, e := range entries(t, g.Runner, member.Session) {
		full = append(full, fmt.Sprintf("%+v", e))
	}
	seen["the log"] = []byte(strings.Join(full, "\n"))
	checkNoCanary(t, seen)
	if t.Failed() {
		t.Logf("updates:\n%s", updates.String())
	}
	switch {
	case home == "" && !inJail:
		t.Log("no private HOME on this provider: the agent's files are not inspected")
	case len(files) == 0:
		t.Error("the agent wrote nothing in its private HOME")
	default:
		t.Logf("%d files of the agent's HOME inspected", len(files))
	}
	// Every model request the server saw was settled; the route refused
	// none of the agent's (Claude Code's count_tokens among them: it was
	// once refused model_path_refused, a unit of the channel's refusal
	// budget a turn), and a count is charged no tokens.
	settled, counted := 0, 0
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindSettlement && e.Tool.Name == agent.Model {
			settled++
			if strings.HasPrefix(e.Scope, "in=0/out=0/") {
				counted++
			}
		}
		if e.Kind == eventlog.KindDenial && strings.HasPrefix(string(e.Code), "model_") {
			t.Errorf("the route refused a model request: %s %s", e.Code, e.Result)
		}
	}
	if settled != len(got) {
		t.Errorf("%d model calls settled, the model server saw %d", settled, len(got))
	}
	if c.countsTokens {
		n := 0
		for _, r := range got {
			if r.Reply == "count_tokens" {
				n++
				if r.Path != "/v1/messages/count_tokens" || r.RawQuery != "" {
					t.Errorf("a count reached the model server at %s?%s", r.Path, r.RawQuery)
				}
			}
		}
		if n == 0 || counted != n {
			t.Errorf("%d count_tokens requests reached the model server, %d settled with no tokens; want at least one, each settled so", n, counted)
		}
	}
	for _, want := range []string{"skip allow  read_only_permission", "denial deny permission_missing refused_permission", "tool_call allow  authorized list_issues", "tool_call none  http_200 list_issues", "settlement none  http_200 " + agent.Model, "turn_ended none  end_turn", "process_exited"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// procEnviron returns the environment and argv of every live process
// whose environment holds the variable marker (the whole "K=V"): the door,
// the agent and what it started, read from /proc while they run. It fails
// when it finds none.
func procEnviron(t *testing.T, marker string) []byte {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out [][]byte
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00"+marker+"\x00")) && !bytes.HasPrefix(env, []byte(marker+"\x00")) {
			continue
		}
		argv, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out = append(out, env, argv)
	}
	if len(out) == 0 {
		t.Fatalf("no live process has %s", marker)
	}
	t.Logf("%d processes run with the agent's environment", len(out)/2)
	return bytes.Join(out, []byte("\n"))
}

// TestClaudeCodeInTheJail is TestClaudeCodeThroughTheDoor's turn with the
// agent in the jail provider (adapters/jail, graded isolated), with
// network none: an empty network namespace with loopback only, where the
// door's model relay and its MCP server, both relayed to the broker socket
// mounted into the jail, are the agent's only way out. The agent's
// install directory is bound read-only; node is the host's read-only
// /usr. The jail gives the agent its workspace as HOME (the Runner makes
// no private HOME on a provider whose instance has no host directory).
// Skipped where the kernel offers no jail, outside CI.
func TestClaudeCodeInTheJail(t *testing.T) {
	argv, install := realAgent(t, "CHECKFU_TEST_CLAUDE_ACP")
	p := jailFor(t, install)
	for i, a := range argv {
		if rel, err := filepath.Rel(install, a); err == nil && filepath.IsAbs(a) && !strings.HasPrefix(rel, "..") {
			argv[i] = filepath.Join(jailAgentsPath, rel)
		}
	}
	realTurn(t, realCase{argv: argv, harness: "claude-code", dialect: modelroute.AnthropicMessages, refusalEndsTurn: true, countsTokens: true,
		provider: p, install: jailAgentsPath, profile: `{"type": "none"}`})
}

// TestCodexInTheJail is TestCodexThroughTheDoor's turn in the jail with
// network none, as TestClaudeCodeInTheJail: codex-acp's native binary
// from the read-only install directory, started by the harness entry's
// own argv, which names the model provider on the command line (the
// jail's HOME is its own, where the Runner writes no config.toml).
func TestCodexInTheJail(t *testing.T) {
	_, install := realAgent(t, "CHECKFU_TEST_CODEX_ACP")
	p := jailFor(t, install)
	realTurn(t, realCase{argv: []string{}, harness: "codex", dialect: modelroute.OpenAIResponses,
		provider: p, install: jailAgentsPath, profile: `{"type": "none"}`})
}

// TestGeminiCLIInTheJail is TestGeminiCLIThroughTheDoor's turn in the
// jail with network none, as TestClaudeCodeInTheJail: gemini.js from the
// read-only install directory, started by the harness entry's own argv.
// The jail's HOME is its own, where the Runner writes no settings.json:
// Gemini CLI's usage statistics are not turned off there, and have no
// route out.
func TestGeminiCLIInTheJail(t *testing.T) {
	_, install := realAgent(t, "CHECKFU_TEST_GEMINI_CLI")
	p := jailFor(t, install)
	realTurn(t, realCase{argv: []string{}, harness: "gemini-cli", dialect: modelroute.Gemini, refusalToModel: "was canceled by the user",
		provider: p, install: jailAgentsPath, profile: `{"type": "none"}`})
}

// jailAgentsPath is where the agents' install directory is bound in a
// jail.
const jailAgentsPath = jail.BindRoot + "/agents"

// jailFor returns a jail provider with install bound read-only at
// jailAgentsPath. Where the kernel offers no jail it skips, outside CI.
func jailFor(t *testing.T, install string) *inspectedJail {
	t.Helper()
	p, err := jail.New(jail.Config{Binds: []jail.Bind{{Source: install, Target: jailAgentsPath}}})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no jail in CI: %v", err)
		}
		t.Skipf("no jail here: %v", err)
	}
	return &inspectedJail{Provider: p}
}

// inspectedJail is a jail provider that keeps the instance it made, so
// the test can read the jail's workspace (the agent's HOME, all a jail
// keeps between its processes) from inside another jail of it.
type inspectedJail struct {
	*jail.Provider
	inst adapters.Instance
}

func (p *inspectedJail) CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, dir string) (adapters.Instance, error) {
	inst, err := p.Provider.CreateWithBroker(ctx, spec, dir)
	p.inst = inst
	return inst, err
}

// workspaceFiles returns every regular file of the jail's workspace, by
// path, as a tar stream a new process of the instance writes: the
// agent's process must have ended.
func (p *inspectedJail) workspaceFiles(t *testing.T) map[string][]byte {
	t.Helper()
	if p.inst == nil {
		t.Fatal("control: the jail made no instance")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := p.inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"tar", "-C", jail.WorkspacePath, "-cf", "-", "."}})
	if err != nil {
		t.Fatalf("reading the jail's workspace: %v", err)
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr())
	out := map[string][]byte{}
	tr := tar.NewReader(proc.Stdout())
	for {
		h, err := tr.Next()
		if err != nil {
			if err != io.EOF {
				t.Errorf("the jail's workspace as tar: %v", err)
			}
			break
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[jail.WorkspacePath+"/"+strings.TrimPrefix(h.Name, "./")] = b
		}
	}
	io.Copy(io.Discard, proc.Stdout())
	if code, err := proc.Wait(); code != 0 || err != nil {
		t.Errorf("tar of the jail's workspace: exit %d, %v", code, err)
	}
	return out
}
