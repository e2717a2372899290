package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// agentsDirEnv names the directory where the agents pinned in
// .ci/agents are installed (the parent of their node_modules), as
// .ci/setup.d/50-real-agents.sh exports it for the runner's tests.
const agentsDirEnv = "CHECKFU_TEST_AGENTS_DIR"

// jailAgentsPath is where the agents' directory is bound, read-only, in
// a jail.
const jailAgentsPath = jail.BindRoot + "/agents"

// The model key's custody binding: the key is a canary made per run.
var modelCredential = custody.Binding{Namespace: "acme", Integration: "model", Handle: address.MustParseHandle("ch_mmmmmmmmmmmmmmmmmmmmmmmmmm")}

// quickstartAgents are the harness entries the quickstart runs: those
// .ci/agents pins.
var quickstartAgents = []string{"claude-code", "codex", "gemini-cli"}

// agentTitle names an agent for the output, with the package its
// harness entry pins.
func agentTitle(name string) string {
	l, _ := admission.Agent(name)
	return name + " (" + l.Package + ")"
}

// A realAgent is the pinned third-party coding agent the quickstart runs
// for one turn: its harness catalog entry and where it is installed.
type realAgent struct {
	name   string // its harness entry's name: claude-code, codex or gemini-cli
	launch admission.AgentLaunch
	dir    string // the install directory on the host
}

// findAgent returns the agent -agent names when it can run here, or the
// one line that says why not and how to enable it.
func findAgent(o options) (*realAgent, string) {
	switch o.provider {
	case "docker":
		return nil, "skipped (node and the pinned agents are not in the agent's busybox image: use -provider jail or process)"
	case "process-wire":
		return nil, "skipped (a remote placement gets no broker, so no door: use -provider jail or process)"
	}
	name := cmp.Or(o.agent, "codex")
	launch, ok := admission.Agent(name)
	if !ok || !slices.Contains(quickstartAgents, name) {
		return nil, "skipped (-agent " + name + " is not claude-code, codex or gemini-cli)"
	}
	enable := "set " + agentsDirEnv + " to a copy of .ci/agents after npm ci --ignore-scripts in it (as .ci/setup.d/50-real-agents.sh does)"
	if o.agentsDir == "" {
		return nil, "skipped: to run " + agentTitle(name) + " for one turn, " + enable
	}
	argv := launch.Render(o.agentsDir, "", "").Argv
	if _, err := exec.LookPath(argv[0]); err != nil && !filepath.IsAbs(argv[0]) {
		return nil, "skipped: " + agentTitle(name) + " runs on " + argv[0] + " (Node.js 20), which is not on PATH"
	}
	for _, a := range argv {
		if _, err := os.Stat(a); filepath.IsAbs(a) && err != nil {
			return nil, "skipped: " + name + " is not installed in " + agentsDirEnv + "=" + o.agentsDir + ": " + enable
		}
	}
	return &realAgent{name: name, launch: launch, dir: o.agentsDir}, ""
}

// A mockModel is the agent's model: runnertest.Model, a scripted server
// (a mock, no model at all) on 127.0.0.1 that the Connection reaches as
// model.example.com through the model route and the outbound edge, which
// attaches the key.
type mockModel struct {
	m       *runnertest.Model
	srv     *httptest.Server
	dialect modelroute.Dialect
	models  []string
	key     string // the model key, a canary
}

// startModel starts a's mock model: it asks for list_issues as a's model
// sees the tool, then answers in text.
func startModel(a *realAgent, key string) *mockModel {
	tool, ns := a.launch.Tool(runner.MCPServerName, "list_issues")
	m := &runnertest.Model{Calls: []runnertest.ToolUse{{Tool: tool, Namespace: ns, Arguments: map[string]any{"state": "open"}}}}
	return &mockModel{m: m, srv: m.Start(), dialect: modelroute.Dialect(a.launch.Dialect), models: []string{a.launch.Model}, key: key}
}

// connection is the model route's Connection: one registration of the
// dialect's path on model.example.com, the model key attached at the
// edge, the models allowed and a budget. Its rule's path prefix, matched
// on segment boundaries, also allows the other paths the route sends to:
// Anthropic Messages' count_tokens (Claude Code's, one a turn), Gemini's
// /{model}:{method}.
func (mm *mockModel) connection(u *upstream) runner.Connection {
	port := mm.srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	u.dns.Set("model.example.com", netip.MustParseAddr("127.0.0.1"))
	headers := []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta"}
	switch mm.dialect {
	case modelroute.Gemini:
		headers = []string{"Content-Type", "Accept"}
	case modelroute.OpenAIResponses, modelroute.OpenAIChat:
		headers = []string{"Content-Type", "Accept", "Openai-Beta"}
	}
	return runner.Connection{Credential: modelCredential, Provider: integration,
		Rules: []egress.Rule{{Host: "model.example.com", Port: port, PathPrefix: mm.dialect.Path(), Methods: []string{"POST"}, Headers: headers}},
		Tools: []authz.Registration{{Capability: "model." + string(mm.dialect), Operation: "POST", Resource: "https://model.example.com:" + strconv.Itoa(int(port)) + mm.dialect.Path(),
			Credential: modelCredential, Effect: authz.ReadOnly, Protocol: authz.ModelAPI,
			Tool:  authz.ToolDescriptor{Name: "model", Description: "The agent's own model (a mock).", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Model: authz.ModelRoute{Dialect: mm.dialect, Models: mm.models, Requests: 32, Tokens: 1 << 20}}},
	}
}

// realTurn runs step 7: a's turn under the door, on the session's
// provider. It fails when the turn does not end, when the agent's call
// did not reach the upstream once, when the model server missed the key
// or saw the placeholder (runnertest.CheckKey), or when anything the
// agent said or wrote holds a secret.
func realTurn(ctx context.Context, p *progress, s *runner.Session, jailed bool, a *realAgent, mm *mockModel, up *upstream, secrets []string) error {
	ctx, cancel := context.WithTimeout(ctx, realTurnTimeout)
	defer cancel()
	door, err := buildDoor(ctx)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(door))
	install := a.dir
	if jailed {
		install = jailAgentsPath
	}
	scan := &leakScan{secrets: secrets}
	var mu sync.Mutex
	var text strings.Builder
	onUpdate := func(n acp.SessionNotification) {
		b, _ := json.Marshal(n)
		scan.Write(b)
		if t, ok := agentText(n); ok {
			mu.Lock()
			if text.Len() <= maxAgentText {
				text.WriteString(t)
			}
			mu.Unlock()
		}
	}
	hits := up.hits.Load()
	launch := a.launch
	agent, err := s.Launch(ctx, runner.LaunchConfig{Door: door, Agent: &launch, Install: install, Stderr: scan, OnUpdate: onUpdate})
	if err != nil {
		return err
	}
	res, err := agent.Prompt(ctx, "List the open issues of acme/app with the list_issues tool.")
	home := agent.Home()
	// A real agent outlives its stdin: the door ends its process group
	// once its input has ended (logged exit_143).
	cerr := agent.Close(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("quickstart: %s's turn: %w", a.name, err)
	}
	if cerr != nil {
		return cerr
	}
	if home != "" {
		if err := scanFiles(home, scan); err != nil {
			return err
		}
	}
	if res.StopReason != acp.StopEndTurn {
		return fmt.Errorf("quickstart: %s's turn ended %s, not end_turn", a.name, res.StopReason)
	}
	if n := up.hits.Load() - hits; n != 1 {
		return fmt.Errorf("quickstart: %s's list_issues reached the upstream %d times, want once", a.name, n)
	}
	got := mm.m.Received()
	if err := runnertest.CheckKey(got, mm.dialect, mm.key); err != nil {
		return fmt.Errorf("quickstart: the model server: %w", err)
	}
	if scan.leaked() {
		return errors.New("quickstart: the real agent saw a secret: what it sent over ACP, its stderr or a file of its HOME holds the tool credential or the model key")
	}
	where := "ACP messages or stderr (its HOME is inside the sandbox, not read here)"
	if home != "" {
		where = "ACP messages, stderr or the files of its private HOME"
	}
	p.done(fmt.Sprintf("%s: turn ended %s", agentTitle(a.name), res.StopReason))
	mu.Lock()
	fmt.Fprintf(p.w, "  agent: %s\n", printable(text.String()))
	mu.Unlock()
	fmt.Fprintf(p.w, "  model: MOCK, runnertest.Model, a scripted server on 127.0.0.1 (as model.example.com), no model at all: %d %s requests, all through the door's model route\n", len(got), mm.dialect)
	fmt.Fprintf(p.w, "  checked: the model server saw the key the edge attached on every request, never the agent's placeholder; list_issues reached the upstream once; no key or credential in the agent's %s\n", where)
	return nil
}

// realTurnTimeout bounds step 7: building the door, the agent's start,
// its turn and its end (about 3 s for Codex here, 8 s for Claude Code).
const realTurnTimeout = 3 * time.Minute

// errDoorBuild: the door program is built from the module's source.
var errDoorBuild = errors.New("quickstart: building the door (cmd/checkfu-door) failed")

// buildDoor builds cmd/checkfu-door, static, into a new temporary
// directory, and returns its path. The Runner copies it into the
// broker's directory at launch.
func buildDoor(ctx context.Context) (string, error) {
	mod, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "checkfu-quickstart-door-")
	if err != nil {
		return "", err
	}
	door := filepath.Join(dir, runner.DoorName)
	if err := docker.BuildStatic(ctx, mod, "./cmd/checkfu-door", door); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("%w: %w", errDoorBuild, err)
	}
	return door, nil
}

// scanFiles writes every regular file under dir to scan.
func scanFiles(dir string, scan *leakScan) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		scan.Write([]byte{0}) // a file's end is no secret's middle
		_, err = io.Copy(scan, f)
		return err
	})
}

// A leakScan is a writer that watches what is written to it for any of
// secrets, whole or hex-encoded (holds), across the boundaries of its
// writes. It keeps only a tail one byte shorter than the longest
// encoding, so it holds no secret whole and needs no bound on what it
// reads.
type leakScan struct {
	secrets []string
	mu      sync.Mutex
	tail    []byte
	found   bool
}

func (l *leakScan) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := append(bytes.Clone(l.tail), b...)
	keep := 0
	for _, s := range l.secrets {
		if holds(buf, s) {
			l.found = true
		}
		keep = max(keep, 2*len(s)-1)
	}
	l.tail = bytes.Clone(buf[max(0, len(buf)-keep):])
	return len(b), nil
}

// leaked reports whether any secret was written.
func (l *leakScan) leaked() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.found
}
