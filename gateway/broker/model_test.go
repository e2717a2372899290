package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// placeholder is the key sandbox code holds: not a secret, and never to
// reach the provider.
const placeholder = "placeholder-key-not-a-secret"

// modelClient is sandbox code's HTTP client for the model route on the
// broker socket at path.
func modelClient(t *testing.T, path string) *http.Client {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post sends one model request as an agent would: with its placeholder
// key in both key headers, a cookie, a forged host and an Accept of its
// own, none of which may travel. It returns the status and the body the
// agent read.
func post(t *testing.T, c *http.Client, method, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://api.anthropic.com"+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", placeholder)
	req.Header.Set("Authorization", "Bearer "+placeholder)
	req.Header.Set("Cookie", "session="+placeholder)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-protobuf")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// modelBroker serves a broker over a model rig's channel with the given
// grants, and returns the rig and the agent's client.
func modelBroker(t *testing.T, grants ...string) (*rigtest.Rig, *http.Client) {
	t.Helper()
	r := rigtest.NewModel(t)
	for _, g := range grants {
		r.Grant(g)
	}
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	return r, modelClient(t, rigtest.ServeBroker(t, b))
}

// modelEvents renders the model route's events: the decisions of the
// model capability and its results.
func modelEvents(r *rigtest.Rig) []string {
	var out []string
	for _, ev := range r.Evidence.Events() {
		switch {
		case ev.Kind == authz.EvidenceModelResult:
			out = append(out, fmt.Sprintf("result %s %s %d %s in=%d out=%d", ev.Outcome, ev.Model, ev.Status, ev.Code, ev.InputTokens, ev.OutputTokens))
		case ev.Kind == authz.EvidenceGatewayDecision && (ev.Capability == rigtest.ModelCapability || ev.Capability == ""):
			out = append(out, fmt.Sprintf("decision %s %s %s", ev.Outcome, ev.Tool, ev.Code))
		}
	}
	return out
}

const allowed = `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`

// TestModelRouteAttachesTheKey: an allowed, streamed Messages request
// reaches the scripted model server (a mock) with the model key attached
// by the edge, in x-api-key, and with none of the agent's own credential
// or routing headers; the agent reads the stream and never the key; the
// decision and the result (model, status, tokens) are events.
func TestModelRouteAttachesTheKey(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	status, body := post(t, c, "POST", "/v1/messages?beta=true", allowed)
	if status != 200 || !strings.Contains(body, "hello from the scripted model") || !strings.Contains(body, "event: message_stop") {
		t.Fatalf("allowed call: %d %q", status, body)
	}
	noLeak(t, "the answer", []byte(body))
	got := r.Model.Received()
	if len(got) != 1 {
		t.Fatalf("the model server received %d requests, want 1", len(got))
	}
	req := got[0]
	if k := req.Header.Get("X-Api-Key"); k != rigtest.ModelCanary {
		t.Errorf("the model server got x-api-key %q, want the key custody holds", k)
	}
	for name, vs := range req.Header {
		for _, v := range vs {
			if strings.Contains(v, placeholder) {
				t.Errorf("the agent's placeholder reached the model server in %s", name)
			}
		}
	}
	if req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" {
		t.Errorf("the agent's own headers travelled: %v", req.Header)
	}
	if a := req.Header.Values("Accept"); len(a) != 1 || a[0] != "text/event-stream" {
		t.Errorf("the model server got Accept %q, want the route's own for a stream", a)
	}
	if req.Method != "POST" || req.Path != "/v1/messages" || req.RawQuery != "" || !strings.HasPrefix(req.Host, "model.example.com:") ||
		req.Header.Get("Anthropic-Version") != "2023-06-01" || string(req.Body) != allowed {
		t.Errorf("the model server got %s %s?%s host %s, headers %v, body %q", req.Method, req.Path, req.RawQuery, req.Host, req.Header, req.Body)
	}
	want := []string{
		"decision approved " + rigtest.AllowedModel + " ",
		"result succeeded " + rigtest.AllowedModel + " 200  in=100 out=10",
	}
	if ev := modelEvents(r); !slices.Equal(ev, want) {
		t.Errorf("events:\n got %q\nwant %q", ev, want)
	}
	for _, ev := range r.Evidence.Events() {
		if s := fmt.Sprintf("%+v", ev); strings.Contains(s, rigtest.ModelCanary) || strings.Contains(s, "hello from") || strings.Contains(s, `"hi"`) {
			t.Errorf("an event holds the key or content: %s", s)
		}
	}
}

// TestModelRouteRefusals: a model outside the allowed list, another path
// or method, a body that names no model, an ungranted route and a
// request over the budget are each refused with their code before the
// model server sees anything, and recorded.
func TestModelRouteRefusals(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	for _, tc := range []struct {
		method, target, body string
		status               int
		code                 checkfu.Code
	}{
		{"POST", "/v1/messages", `{"model":"claude-opus-4","stream":true}`, 403, "model_not_allowed"},
		{"POST", "/v1/messages/batches", `{"model":"` + rigtest.AllowedModel + `"}`, 404, "model_path_refused"},
		{"GET", "/api/claude_code/organizations/metrics_enabled", "", 404, "model_path_refused"},
		{"POST", "/v1/messages?other=1", allowed, 404, "model_path_refused"},
		{"POST", "/v1/messages", `{"messages":[]}`, 400, "model_request_invalid"},
	} {
		status, body := post(t, c, tc.method, tc.target, tc.body)
		if status != tc.status || !strings.Contains(body, `"refused: `+string(tc.code)+`"`) {
			t.Errorf("%s %s %s: %d %q, want %d %s", tc.method, tc.target, tc.body, status, body, tc.status, tc.code)
		}
	}
	if n := len(r.Model.Received()); n != 0 {
		t.Fatalf("the model server received %d refused requests", n)
	}
	for i := range rigtest.ModelRequests {
		if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 200 {
			t.Fatalf("request %d of a budget of %d: %d %q", i+1, rigtest.ModelRequests, status, body)
		}
	}
	if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(body, "model_budget_exhausted") {
		t.Fatalf("a request over the budget: %d %q", status, body)
	}
	if n := len(r.Model.Received()); n != rigtest.ModelRequests {
		t.Fatalf("the model server received %d requests, want the budget's %d", n, rigtest.ModelRequests)
	}
	want := []string{"decision refused  model_not_allowed", "decision refused  model_path_refused", "decision refused  model_path_refused",
		"decision refused  model_path_refused", "decision refused  model_request_invalid"}
	ev := modelEvents(r) // a refused model is recorded by its code alone
	if !slices.Equal(ev[:5], want) || ev[len(ev)-1] != "decision refused "+rigtest.AllowedModel+" model_budget_exhausted" {
		t.Errorf("events:\n got %q\nwant %q then the budget's refusal", ev, want)
	}
}

// TestModelRouteNeedsAGrant: a route the actor holds no assignment for,
// and a session with no model route, are refused and recorded.
func TestModelRouteNeedsAGrant(t *testing.T) {
	r, c := modelBroker(t)
	if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(body, "permission_missing") {
		t.Fatalf("an ungranted route: %d %q", status, body)
	}
	plain := rigtest.New(t)
	b, err := broker.New(plain.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	pc := modelClient(t, rigtest.ServeBroker(t, b))
	if status, body := post(t, pc, "POST", "/v1/messages", allowed); status != 403 || !strings.Contains(body, "model_route_unregistered") {
		t.Fatalf("a session without a model route: %d %q", status, body)
	}
	if n := refusals(plain, broker.CodeModelRouteUnregistered); n != 1 {
		t.Errorf("%d model_route_unregistered refusals recorded, want 1", n)
	}
	if len(r.Model.Received()) != 0 {
		t.Fatal("the model server was reached")
	}
}

// TestModelRouteScreensTheStream: a provider that streams the key back
// gets its stream cut before the event holding it reaches the agent.
func TestModelRouteScreensTheStream(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability)
	req, _ := http.NewRequest("POST", "http://door/v1/messages", strings.NewReader(`{"model":"`+rigtest.AllowedModel+`","stream":true,"messages":[{"role":"user","content":"`+rigtest.EchoKey+`"}]}`))
	resp, err := c.Do(req)
	var got []byte
	if err == nil {
		got, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	noLeak(t, "the answer", got)
	if bytes.Contains(got, []byte("message_stop")) {
		t.Fatalf("the stream was not cut: %q", got)
	}
	// The usage counts what the provider reported, the cut part too: the
	// provider produced (and bills) it.
	want := []string{"decision approved " + rigtest.AllowedModel + " ", "result failed " + rigtest.AllowedModel + " 200 credential_echoed in=100 out=10"}
	if ev := modelEvents(r); !slices.Equal(ev, want) {
		t.Errorf("events:\n got %q\nwant %q", ev, want)
	}
}

// TestModelRouteIsNoTool: the model registration is not listed as an MCP
// tool, and a tools/call naming it is refused like any unlisted tool.
func TestModelRouteIsNoTool(t *testing.T) {
	r := rigtest.NewModel(t)
	r.Grant(rigtest.ModelCapability)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := serve(t, b)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "model" {
			t.Fatal("the model route is listed as a tool")
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "model", Arguments: map[string]any{"model": rigtest.AllowedModel}})
	if err != nil || !res.IsError || text(res) != "refused: permission_missing" {
		t.Fatalf("tools/call of the model route: %v %v", res, err)
	}
	if len(r.Model.Received()) != 0 {
		t.Fatal("the model server was reached")
	}
}

// TestModelRouteOpenAIBearer: an OpenAI Responses request gets the key
// as "Authorization: Bearer KEY", attached by the edge, in the place of
// the agent's own; each route allows only its own models.
func TestModelRouteOpenAIBearer(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability, rigtest.OpenAICapability)
	body := `{"model":"` + rigtest.OpenAIModel + `","stream":true,"input":"hi"}`
	status, got := post(t, c, "POST", "/v1/responses", body)
	if status != 200 || !strings.Contains(got, "response.completed") {
		t.Fatalf("an allowed Responses call: %d %q", status, got)
	}
	noLeak(t, "the answer", []byte(got))
	received := r.Model.Received()
	if len(received) != 1 {
		t.Fatalf("the model server received %d requests, want 1", len(received))
	}
	if a, k := received[0].Header.Get("Authorization"), received[0].Header.Get("X-Api-Key"); a != "Bearer "+rigtest.ModelCanary || k != "" {
		t.Fatalf("the model server got Authorization %q, x-api-key %q", a, k)
	}
	if received[0].Path != "/v1/responses" || string(received[0].Body) != body {
		t.Fatalf("the model server got %s %q", received[0].Path, received[0].Body)
	}
	for _, tc := range []struct{ path, model string }{{"/v1/responses", rigtest.AllowedModel}, {"/v1/messages", rigtest.OpenAIModel}} {
		if status, got := post(t, c, "POST", tc.path, `{"model":"`+tc.model+`","stream":true}`); status != 403 || !strings.Contains(got, "model_not_allowed") {
			t.Errorf("%s on %s: %d %q", tc.model, tc.path, status, got)
		}
	}
	var results []string
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceModelResult {
			results = append(results, fmt.Sprintf("%s %s %d in=%d out=%d", ev.Capability, ev.Model, ev.Status, ev.InputTokens, ev.OutputTokens))
		}
	}
	if want := []string{rigtest.OpenAICapability + " " + rigtest.OpenAIModel + " 200 in=100 out=10"}; !slices.Equal(results, want) {
		t.Errorf("results %q, want %q", results, want)
	}
}
