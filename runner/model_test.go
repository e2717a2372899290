package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway/modelroute"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// modelCanary is the model key custody holds for the model route: the
// scripted model server must see it on every request, and no byte of it
// may reach the agent or the log.
const modelCanary = "sk-ant-RUNNERMODELCANARY-0123456789abcdef"

var modelCred = custody.Binding{Namespace: "acme", Integration: "anthropic", Handle: address.MustParseHandle("ch_bbbbbbbbbbbbbbbbbbbbbbbbbm")}

// probeEnv, set to 1, makes the scripted agent first send one Anthropic
// Messages request to its ANTHROPIC_BASE_URL with its ANTHROPIC_API_KEY,
// as an SDK would, and write what it had and got to probeFile in HOME.
const probeEnv = "CHECKFU_RUNNER_TEST_MODEL_PROBE"

const probeFile = "probe.json"

// A probe is what the probing agent had and got.
type probe struct {
	Env    []string
	Argv   []string
	Status int
	Body   string
}

// probeModel is the probing agent's model request.
func probeModel() {
	p := probe{Env: os.Environ(), Argv: os.Args}
	if base := os.Getenv("GOOGLE_GEMINI_BASE_URL"); base != "" {
		p.Status, p.Body = probeGemini(base, os.Getenv("GEMINI_API_KEY"))
		b, _ := json.Marshal(p)
		os.WriteFile(filepath.Join(os.Getenv("HOME"), probeFile), b, 0o600)
		return
	}
	key := os.Getenv("ANTHROPIC_API_KEY")
	req, err := http.NewRequest("POST", os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages?beta=true",
		strings.NewReader(`{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hello"}]}`))
	if err == nil {
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			p.Status, p.Body = resp.StatusCode, string(b)
		}
	}
	if err != nil {
		p.Body = err.Error()
	}
	b, _ := json.Marshal(p)
	os.WriteFile(filepath.Join(os.Getenv("HOME"), probeFile), b, 0o600)
}

// probeGemini sends Gemini CLI's two kinds of model request to base
// with key in x-goog-api-key (and in every other key header), as its
// SDK would: a routing call that asks for JSON, then a streamed turn.
// It returns the first status that is not 200 (else 200) and the
// answers' bodies.
func probeGemini(base, key string) (int, string) {
	status, out := http.StatusOK, ""
	for _, c := range []struct{ path, body string }{
		{"/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"complexity_score":{"type":"integer"},"reasoning":{"type":"string"}}}}}`},
		{"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],"generationConfig":{"maxOutputTokens":64}}`},
	} {
		req, err := http.NewRequest("POST", base+c.path, strings.NewReader(c.body))
		if err != nil {
			return 0, err.Error()
		}
		for _, h := range []string{"X-Goog-Api-Key", "X-Api-Key"} {
			req.Header.Set(h, key)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && status == http.StatusOK {
			status = resp.StatusCode
		}
		out += string(b) + "\n"
	}
	return status, out
}

// modelRig is a rig whose Runner also has a model route: Anthropic
// Messages at the scripted model server m (reached as
// model.example.com), allowing models, on its own Connection whose key
// is modelCanary, assigned to the member.
func modelRig(t *testing.T, m *runnertest.Model, models ...string) *rig {
	t.Helper()
	return dialectRig(t, m, modelroute.AnthropicMessages, nil, models...)
}

// dialectRig is modelRig for the model route of dialect d; edit, when
// set, changes the Config last.
func dialectRig(t *testing.T, m *runnertest.Model, d modelroute.Dialect, edit func(*runner.Config), models ...string) *rig {
	t.Helper()
	srv := m.Start()
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	base := "https://model.example.com:" + strconv.Itoa(int(port))
	headers := []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta"}
	switch d {
	case modelroute.Gemini:
		headers = []string{"Content-Type", "Accept"}
	case modelroute.OpenAIResponses, modelroute.OpenAIChat:
		headers = []string{"Content-Type", "Accept", "Openai-Beta"}
	}
	g := newRig(t, func(c *runner.Config, g *rig) {
		g.dns.Set("model.example.com", netip.MustParseAddr("127.0.0.1"))
		c.Connections = append(c.Connections, runner.Connection{Credential: modelCred, Provider: integration,
			Rules: []egress.Rule{{Host: "model.example.com", Port: port, PathPrefix: d.Path(), Methods: []string{"POST"}, Headers: headers}},
			Tools: []authz.Registration{{Capability: "model." + string(d), Operation: "POST", Resource: base + d.Path(), Credential: modelCred,
				Effect: authz.ReadOnly, Protocol: authz.ModelAPI,
				Tool:  authz.ToolDescriptor{Name: "model", Description: "The agent's own model.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				Model: authz.ModelRoute{Dialect: d, Models: models, Requests: 64, Tokens: 1 << 20}}},
		})
		c.Assignments = append(c.Assignments, authz.PermissionAssignment{Actor: member.Actor, Capability: "model." + string(d),
			Tenant: member.Tenant, Workspace: member.Workspace, Project: member.Project, ExpiresAt: time.Now().Add(time.Hour)})
		if edit != nil {
			edit(c)
		}
	})
	if err := g.PutCredential(context.Background(), modelCred, custody.NewSecret([]byte(modelCanary))); err != nil {
		t.Fatal(err)
	}
	return g
}

// checkModelUpstream checks that every request the model server of
// dialect d got carries the model key, attached by the edge, and
// nothing of the agent's placeholder (runnertest.CheckKey).
func checkModelUpstream(t *testing.T, got []runnertest.ModelRequest, d modelroute.Dialect) {
	t.Helper()
	if err := runnertest.CheckKey(got, d, modelCanary); len(got) == 0 {
		t.Fatal(err)
	} else if err != nil {
		t.Error(err)
	}
}

// homeFiles returns the files under home, by path.
func homeFiles(t *testing.T, home string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				out[p] = b
			}
		}
		return nil
	})
	return out
}

// checkNoCanary fails when any of seen holds the tool credential or the
// model key.
func checkNoCanary(t *testing.T, seen map[string][]byte) {
	t.Helper()
	for what, b := range seen {
		for _, c := range []string{canary, modelCanary} {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds a canary", what)
			}
		}
	}
}

// TestModelRouteUnderTheDoor: with a door and a model registration the
// Runner runs the agent under the door with the model relay on a
// loopback port; the agent (the scripted one, probing its model first)
// gets ANTHROPIC_BASE_URL pointing at it, the placeholder as its only
// key and a private 0700 HOME inside the instance's directory; its model
// request reaches the scripted model server (a mock) with the key
// attached at the edge and never the placeholder, and is logged; its
// tool call still goes through the broker. No canary is in its
// environment, argv, HOME or the log.
func TestModelRouteUnderTheDoor(t *testing.T) {
	claude, _ := admission.Agent("claude-code")
	t.Run("no_harness_entry", func(t *testing.T) { modelRouteUnderTheDoor(t, nil) })
	t.Run("claude-code", func(t *testing.T) { modelRouteUnderTheDoor(t, &claude) })
}

// modelRouteUnderTheDoor is TestModelRouteUnderTheDoor with agent as the
// launch's harness entry (nil: none, the tool named by its own name).
func modelRouteUnderTheDoor(t *testing.T, agent *admission.AgentLaunch) {
	m := &runnertest.Model{}
	g := modelRig(t, m, "claude-sonnet-4-5")
	s := g.admitted(t)
	ctx := context.Background()
	// The agent asks permission for list_issues by the name its
	// harness entry says its model sees for it, as Claude Code does.
	title := "list_issues"
	if agent != nil {
		title, _ = agent.Tool(runner.MCPServerName, "list_issues")
	}
	ps := agentSpec(t, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Title: title}})
	ps.Env = append(ps.Env, probeEnv+"=1")
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps, Door: clitest.Door(t), Agent: agent, Install: t.TempDir(), OnUpdate: collect(&said)})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := a.Prompt(ctx, "go"); err != nil || resp.StopReason != "end_turn" {
		t.Fatalf("Prompt = %v, %v", resp, err)
	}
	home := a.Home()
	if home == "" || filepath.Dir(home) != a.Cwd() || !strings.HasPrefix(filepath.Base(home), runner.HomeDirPrefix) {
		t.Fatalf("the agent's HOME %q, want a private one inside %q", home, a.Cwd())
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the agent's HOME: %v, %v; want 0700", fi, err)
	}
	files := homeFiles(t, home)
	var p probe
	if err := json.Unmarshal(files[filepath.Join(home, probeFile)], &p); err != nil {
		t.Fatalf("the probe: %v", err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `"text":"OK"`) {
		t.Errorf("the agent's model request: %d %q", p.Status, p.Body)
	}
	env := strings.Join(p.Env, "\n")
	want := []string{"\nANTHROPIC_API_KEY=" + admission.PlaceholderKey + "\n", "\nHOME=" + home + "\n", "\nANTHROPIC_BASE_URL=http://127.0.0.1:"}
	if agent != nil {
		// The harness entry's settings are rendered in: its opt-outs,
		// and no unfilled placeholder.
		want = append(want, "\nDISABLE_TELEMETRY=1\n", "\nIS_SANDBOX=1\n")
	}
	for _, want := range want {
		if !strings.Contains("\n"+env+"\n", want) {
			t.Errorf("the agent's environment lacks %q:\n%s", strings.TrimSpace(want), env)
		}
	}
	// The tools listed through the door hold no model: the route is no
	// tool.
	if len(said) != 3 || said[0] != "[scripted] tools/list through the announced MCP server -> create_issue, list_issues" ||
		said[1] != "[scripted] list_issues -> permitted by the client" || said[2] != `[scripted] list_issues -> {"issues":[1]}` {
		t.Errorf("the agent said %q", said)
	}
	if strings.Contains(env, "{model_url}") || strings.Contains(env, "{home}") || strings.Contains(env, "{key}") {
		t.Errorf("the agent's environment holds an unfilled placeholder:\n%s", env)
	}
	if strings.Count(env, "ANTHROPIC_API_KEY=") != 1 {
		t.Errorf("the agent's environment names its key %d times, want once: the placeholder", strings.Count(env, "ANTHROPIC_API_KEY="))
	}
	checkModelUpstream(t, m.Received(), modelroute.AnthropicMessages)
	if len(m.Received()) != 1 {
		t.Errorf("the model server got %d requests, want 1", len(m.Received()))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]byte{"the agent's environment and argv": []byte(env + "\n" + strings.Join(p.Argv, "\n")), "what the agent received": []byte(p.Body + strings.Join(said, "\n"))}
	for f, b := range files {
		seen["the file "+f] = b
	}
	var log []string
	settled, readOnly := 0, 0
	for _, e := range entries(t, g.Runner, member.Session) {
		log = append(log, fmt.Sprintf("%+v", e))
		if e.Kind == eventlog.KindSettlement && e.Tool.Name == "claude-sonnet-4-5" {
			settled++
		}
		if e.Kind == eventlog.KindSkip && e.Result == runner.ResultReadOnlyPermission {
			readOnly++
		}
	}
	if readOnly != 1 {
		t.Errorf("the log holds %d read-only permissions, want 1: the harness name binds the profile's tool", readOnly)
	}
	seen["the log"] = []byte(strings.Join(log, "\n"))
	checkNoCanary(t, seen)
	if settled != 1 {
		t.Errorf("the log holds %d model results, want 1", settled)
	}
}

// TestGeminiModelRouteUnderTheDoor: with the gemini-cli harness entry
// and a Gemini model route, the agent (the scripted one, probing its
// model as Gemini CLI would: a routing call asking for JSON, then a
// streamed turn) gets GOOGLE_GEMINI_BASE_URL pointing at the door's
// relay and the placeholder as GEMINI_API_KEY; both requests reach the
// scripted model server (a mock) at the checked model's path, with the
// key in x-goog-api-key attached at the edge and never the placeholder;
// the routing call is answered with JSON its schema accepts; the log
// holds both results, and no canary is in the agent's environment, argv,
// HOME, what it received, or the log.
func TestGeminiModelRouteUnderTheDoor(t *testing.T) {
	agent, _ := admission.Agent("gemini-cli")
	m := &runnertest.Model{}
	g := dialectRig(t, m, modelroute.Gemini, nil, agent.Model)
	s := g.admitted(t)
	ctx := context.Background()
	title, _ := agent.Tool(runner.MCPServerName, "list_issues")
	ps := agentSpec(t, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Title: title}})
	ps.Env = append(ps.Env, probeEnv+"=1")
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: ps, Door: clitest.Door(t), Agent: &agent, Install: t.TempDir(), OnUpdate: collect(&said)})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := a.Prompt(ctx, "go"); err != nil || resp.StopReason != "end_turn" {
		t.Fatalf("Prompt = %v, %v", resp, err)
	}
	home := a.Home()
	files := homeFiles(t, home)
	var p probe
	if err := json.Unmarshal(files[filepath.Join(home, probeFile)], &p); err != nil {
		t.Fatalf("the probe: %v", err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `{\"complexity_score\":10,\"reasoning\":\"x\"}`) || !strings.Contains(p.Body, `"finishReason":"STOP"`) {
		t.Errorf("the agent's model requests: %d %q", p.Status, p.Body)
	}
	env := "\n" + strings.Join(p.Env, "\n") + "\n"
	for _, want := range []string{"\nGEMINI_API_KEY=" + admission.PlaceholderKey + "\n", "\nHOME=" + home + "\n", "\nGOOGLE_GEMINI_BASE_URL=http://127.0.0.1:", "\nGEMINI_CLI_TRUST_WORKSPACE=true\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("the agent's environment lacks %q:\n%s", strings.TrimSpace(want), env)
		}
	}
	got := m.Received()
	checkModelUpstream(t, got, modelroute.Gemini)
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Path+"?"+r.RawQuery+" "+r.Reply)
	}
	if want := []string{"/v1beta/models/gemini-2.5-pro:generateContent? json", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse text"}; !slices.Equal(paths, want) {
		t.Errorf("the model server got %q, want %q", paths, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]byte{"the agent's environment and argv": []byte(env + "\n" + strings.Join(p.Argv, "\n")), "what the agent received": []byte(p.Body + strings.Join(said, "\n"))}
	for f, b := range files {
		seen["the file "+f] = b
	}
	var log []string
	settled := 0
	for _, e := range entries(t, g.Runner, member.Session) {
		log = append(log, fmt.Sprintf("%+v", e))
		if e.Kind == eventlog.KindSettlement && e.Tool.Name == agent.Model {
			settled++
		}
	}
	seen["the log"] = []byte(strings.Join(log, "\n"))
	checkNoCanary(t, seen)
	if settled != 2 {
		t.Errorf("the log holds %d model results, want 2", settled)
	}
}

// TestAgentLaunchHomeFiles: a harness entry's HOME files are written
// only inside the agent's private HOME, at most runner.MaxHomeFiles of at
// most runner.MaxHomeFileBytes each: a path that leaves the HOME, one
// file too many or one byte too many is refused with
// checkfu.CodeConfigInvalid before any process starts, and logged; at the
// bounds the launch goes ahead.
func TestAgentLaunchHomeFiles(t *testing.T) {
	g := modelRig(t, &runnertest.Model{}, "claude-sonnet-4-5")
	ctx := context.Background()
	files := func(n, size int) map[string]string {
		out := map[string]string{}
		for i := range n {
			out[fmt.Sprintf(".config/f%d", i)] = strings.Repeat("x", size)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		ok    bool
	}{
		{"at the bounds", files(runner.MaxHomeFiles, runner.MaxHomeFileBytes), true},
		{"a path out of HOME", map[string]string{"../escaped": "x"}, false},
		{"a path to HOME itself", map[string]string{".": "x"}, false},
		{"one file too many", files(runner.MaxHomeFiles+1, 1), false},
		{"one byte too many", files(1, runner.MaxHomeFileBytes+1), false},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := g.admitted(t)
			defer s.Close()
			agent := admission.AgentLaunch{Env: []string{"HOME={home}"}, Files: c.files}
			a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, nil), Door: clitest.Door(t), Agent: &agent})
			if !c.ok {
				if !errors.Is(err, checkfu.CodeConfigInvalid) {
					t.Fatalf("Launch = %v, want config_invalid", err)
				}
				es := entries(t, g.Runner, member.Session)
				if last := es[len(es)-1]; last.Kind != eventlog.KindDenial || last.Code != string(checkfu.CodeConfigInvalid) || last.Result != string(runner.CodeRefusedBroker) {
					t.Fatalf("the refusal is logged as %v", rows(es[len(es)-1:]))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			got := homeFiles(t, a.Home())
			if len(got) != runner.MaxHomeFiles {
				t.Fatalf("HOME holds %d files, want %d", len(got), runner.MaxHomeFiles)
			}
		})
	}
}

// TestPermissionByToolCall: for a harness entry whose permission requests
// name no tool (codex-acp asks "Approve MCP tool call" for each), the
// Runner binds a request to the tool call the agent announced under the
// same toolCallId: an announced read_only call is allowed and logged as
// such, and a request whose id was never announced is unbound, logged.
func TestPermissionByToolCall(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	codex, _ := admission.Agent("codex")
	announce := codex.Permission(runner.MCPServerName, "list_issues")
	said := turnWith(t, s, runner.LaunchConfig{Agent: &codex}, []runnertest.Step{
		{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Title: "Approve MCP tool call", Announce: announce},
		{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true, Title: "Approve MCP tool call"},
	})
	want := []string{"[scripted] tools/list -> create_issue, list_issues", "[scripted] list_issues -> permitted by the client", `[scripted] list_issues -> {"issues":[1]}`, "[scripted] list_issues -> not permitted by the client"}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the agent said %q, want %q", said, want)
	}
	var got []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindSkip || r.Kind == eventlog.KindDenial {
			got = append(got, r)
		}
	}
	if wantRows := []row{{eventlog.KindSkip, eventlog.DecisionAllow, "", runner.ResultReadOnlyPermission}, {eventlog.KindDenial, eventlog.DecisionDeny, string(runner.CodePermissionUnbound), string(runner.CodeRefusedPermission)}}; !slices.Equal(got, wantRows) {
		t.Fatalf("log %v, want %v", got, wantRows)
	}
}

// TestModelKeyCheckCanFail: runnertest.CheckKey, the check behind "the
// model server saw the key attached by the edge and never the
// placeholder" (here and in examples/quickstart), refuses a request
// without the key, with the agent's own credential header beside it, or
// with the placeholder in a header or the body, and an empty record; it
// passes requests that carry the key alone, in each dialect's header.
// Its error names no key.
func TestModelKeyCheckCanFail(t *testing.T) {
	const key = "sk-CHECKKEYCANARY"
	anthropic := func(h ...string) runnertest.ModelRequest {
		r := runnertest.ModelRequest{Path: "/v1/messages", Header: http.Header{}, Body: []byte(`{"model":"m"}`)}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Add(h[i], h[i+1])
		}
		return r
	}
	openai := anthropic("Authorization", "Bearer "+key)
	openai.Path = "/v1/responses"
	inBody := anthropic("X-Api-Key", key)
	inBody.Body = []byte(`{"metadata":"` + admission.PlaceholderKey + `"}`)
	for _, c := range []struct {
		name string
		d    modelroute.Dialect
		got  []runnertest.ModelRequest
		ok   bool
	}{
		{"anthropic key alone", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", key), anthropic("X-Api-Key", key, "Anthropic-Version", "2023-06-01")}, true},
		{"openai bearer alone", modelroute.OpenAIResponses, []runnertest.ModelRequest{openai}, true},
		{"nothing received", modelroute.AnthropicMessages, nil, false},
		{"no key", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", key), anthropic()}, false},
		{"another key", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", "sk-other")}, false},
		{"the agent's Authorization beside the key", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", key, "Authorization", "Bearer x")}, false},
		{"the agent's x-api-key beside the bearer", modelroute.OpenAIResponses, []runnertest.ModelRequest{openai, anthropic("Authorization", "Bearer "+key, "X-Api-Key", "x")}, false},
		{"the placeholder in a header", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", key, "Anthropic-Beta", admission.PlaceholderKey)}, false},
		{"the placeholder as the key", modelroute.AnthropicMessages, []runnertest.ModelRequest{anthropic("X-Api-Key", admission.PlaceholderKey)}, false},
		{"the placeholder in the body", modelroute.AnthropicMessages, []runnertest.ModelRequest{inBody}, false},
	} {
		err := runnertest.CheckKey(c.got, c.d, key)
		if (err == nil) != c.ok {
			t.Errorf("%s: CheckKey = %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error holds the key: %v", c.name, err)
		}
	}
}
