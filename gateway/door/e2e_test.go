package door_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/door"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/internal/clitest"
)

// agentEnv, set to 1, makes the test binary the scripted agent.
const agentEnv = "CHECKFU_DOOR_TEST_AGENT"

// A step is one thing the scripted agent did and what it got back.
type step struct {
	Name   string `json:"name"`
	Status int    `json:"status"`
	Body   string `json:"body"`
}

// agentMain is the scripted agent, run by the door as its child inside
// the test's sandbox (its own process, a private HOME, an environment of
// the test's choosing): it sends Anthropic Messages requests to the
// door's model relay with its placeholder key, as Claude Code would, and
// calls the session's tools through the door's stdio MCP server. It
// prints each step, its environment and its argv as JSON lines, and
// keeps a transcript in HOME, as real agents do.
func agentMain() int {
	out := json.NewEncoder(os.Stdout)
	out.Encode(step{Name: "env", Body: strings.Join(os.Environ(), "\n")})
	out.Encode(step{Name: "argv", Body: strings.Join(os.Args, "\n")})
	base := os.Getenv(door.ModelURLEnv)
	key := os.Getenv("ANTHROPIC_API_KEY")
	var transcript bytes.Buffer
	model := func(name, method, path, body string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			out.Encode(step{Name: name, Body: err.Error()})
			return
		}
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out.Encode(step{Name: name, Body: err.Error()})
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Fprintf(&transcript, "%s %d %s\n", name, resp.StatusCode, b)
		out.Encode(step{Name: name, Status: resp.StatusCode, Body: string(b)})
	}
	msg := func(m string) string {
		return `{"model":"` + m + `","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"list the open issues"}]}`
	}
	model("model allowed", "POST", "/v1/messages?beta=true", msg(rigtest.AllowedModel))
	model("model refused", "POST", "/v1/messages?beta=true", msg("claude-opus-4"))
	model("count tokens", "POST", "/v1/messages/count_tokens?beta=true", `{"model":"`+rigtest.AllowedModel+`","messages":[{"role":"user","content":"list the open issues"}]}`)
	model("path refused", "POST", "/v1/messages/batches?beta=true", msg(rigtest.AllowedModel))
	model("metrics refused", "GET", "/api/claude_code/organizations/metrics_enabled", "")
	model("model allowed 2", "POST", "/v1/messages", msg(rigtest.AllowedModel))
	model("over budget", "POST", "/v1/messages", msg(rigtest.AllowedModel))

	// The tools, through the door's stdio MCP server, as an agent
	// starts the server ACP's session/new announces.
	ctx := context.Background()
	doorBin, socket := os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(doorBin, "mcp", "-socket", socket)}, nil)
	if err != nil {
		out.Encode(step{Name: "mcp", Body: err.Error()})
		return 1
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		out.Encode(step{Name: "tools/list", Body: err.Error()})
		return 1
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	out.Encode(step{Name: "tools/list", Body: strings.Join(names, " ")})
	for _, c := range []struct {
		name string
		args map[string]any
	}{{"list_issues", map[string]any{"state": "open"}}, {"create_issue", map[string]any{"title": "x"}}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			out.Encode(step{Name: c.name, Body: err.Error()})
			continue
		}
		b, _ := json.Marshal(res)
		fmt.Fprintf(&transcript, "%s %s\n", c.name, b)
		out.Encode(step{Name: c.name, Body: string(b)})
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), "transcript.txt"), transcript.Bytes(), 0o600); err != nil {
		out.Encode(step{Name: "transcript", Body: err.Error()})
		return 1
	}
	return 0
}

// TestModelRouteThroughTheDoor: a scripted agent, its own process in the
// test's sandbox with a private HOME and only the placeholder key, runs
// under the real door program (cmd/checkfu-door run): its Messages
// requests reach the scripted model server (a mock) through the door's
// model relay and the plane's model route, which attaches the key at the
// edge, and so does its count_tokens request (Claude Code's, a request of
// the budget charged no tokens); a refused model, a refused path and a
// request over the budget
// get their codes before the model server sees anything; its tool calls
// go through the door's stdio MCP server. Neither the model key nor the
// tool credential is in anything the agent received, its environment,
// its argv, the files it wrote, or the event log.
func TestModelRouteThroughTheDoor(t *testing.T) {
	doorBin := clitest.Door(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := rigtest.NewModel(t)
	r.Grant(rigtest.ModelCapability)
	r.Grant("issues.list")
	r.Grant("issues.create")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	socket := rigtest.ServeBroker(t, b)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, doorBin, "run", "-socket", socket, "-model", "127.0.0.1:0", "--", self, "-test.run=^$", doorBin, socket)
	cmd.Env = []string{agentEnv + "=1", "HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=" + admission.PlaceholderKey}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The agent's input stays open while it works, as the Runner's ACP
	// stream does.
	input, open, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	cmd.Stdin = input
	err = cmd.Run()
	input.Close()
	if err != nil {
		t.Fatalf("the door and its agent: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	got := map[string]step{}
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var s step
		if err := dec.Decode(&s); err != nil {
			t.Fatal(err)
		}
		got[s.Name] = s
	}
	for name, want := range map[string]struct {
		status int
		text   string
	}{
		"model allowed":   {200, "hello from the scripted model"},
		"count tokens":    {200, `{"input_tokens":100}`},
		"model allowed 2": {200, "event: message_stop"},
		"model refused":   {403, `"refused: model_not_allowed"`},
		"path refused":    {404, `"refused: model_path_refused"`},
		"metrics refused": {404, `"refused: model_path_refused"`},
		"over budget":     {403, `"refused: model_budget_exhausted"`},
		"tools/list":      {0, "create_issue echo list_issues outside"}, // no model: the route is no tool
		"list_issues":     {0, `{\"issues\":[{\"n\":1}]}`},
		"create_issue":    {0, "refused: approval_required"},
	} {
		if s := got[name]; s.Status != want.status || !strings.Contains(s.Body, want.text) {
			t.Errorf("%s: %d %q, want %d and %q", name, s.Status, s.Body, want.status, want.text)
		}
	}
	// The scripted model server saw the key, attached by the edge, on the
	// three allowed requests only (the count at its own path), and never
	// the agent's placeholder.
	received := r.Model.Received()
	var paths []string
	for _, req := range received {
		paths = append(paths, req.Path)
	}
	if want := []string{"/v1/messages", "/v1/messages/count_tokens", "/v1/messages"}; !slices.Equal(paths, want) {
		t.Errorf("the model server received %q, want %q", paths, want)
	}
	for i, req := range received {
		if req.Header.Get("X-Api-Key") != rigtest.ModelCanary || req.Header.Get("Authorization") != "" {
			t.Errorf("request %d: x-api-key %q, authorization %q", i+1, req.Header.Get("X-Api-Key"), req.Header.Get("Authorization"))
		}
		if h := fmt.Sprint(req.Header); strings.Contains(h, admission.PlaceholderKey) || bytes.Contains(req.Body, []byte(admission.PlaceholderKey)) {
			t.Errorf("request %d carries the agent's placeholder", i+1)
		}
	}
	// No canary anywhere the agent can see, or in the log.
	seen := map[string][]byte{"the agent's output (its env, argv and answers)": stdout.Bytes(), "the agent's stderr": stderr.Bytes()}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			seen["the file "+p] = b
		}
		return nil
	})
	var events []string
	for _, ev := range r.Evidence.Events() {
		events = append(events, fmt.Sprintf("%+v", ev))
	}
	seen["the events"] = []byte(strings.Join(events, "\n"))
	if len(seen) < 4 {
		t.Fatalf("the agent wrote no transcript: %v", slices.Sorted(maps.Keys(seen)))
	}
	for what, b := range seen {
		for _, canary := range []string{rigtest.ModelCanary, rigtest.Canary} {
			if bytes.Contains(b, []byte(canary)) {
				t.Errorf("%s holds a canary", what)
			}
		}
	}
	var results []string
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceModelResult {
			results = append(results, fmt.Sprintf("%s %d in=%d out=%d", ev.Model, ev.Status, ev.InputTokens, ev.OutputTokens))
		}
	}
	used, counted := rigtest.AllowedModel+" 200 in=100 out=10", rigtest.AllowedModel+" 200 in=0 out=0"
	if want := []string{used, counted, used}; !slices.Equal(results, want) {
		t.Errorf("model results: %q, want %q", results, want)
	}
}
