package broker_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// countTokens is a count_tokens body as Claude Code sends it: a
// Messages body without max_tokens.
const countTokens = `{"model":"` + rigtest.AllowedModel + `","messages":[{"role":"user","content":"hi"}]}`

// tryPost is post for a request that may find the broker gone: it
// returns the transport's error instead of failing the test.
func tryPost(c *http.Client, target, body string) (int, string, error) {
	req, err := http.NewRequest("POST", "http://api.anthropic.com"+target, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Api-Key", placeholder)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got), nil
}

// TestModelRouteCountTokensOutlastsTheRefusalBudget: Claude Code sends
// one POST /v1/messages/count_tokens?beta=true a turn. A route that
// refused it spent one unit of the channel's refusal budget a turn, and
// after broker.MaxRefusals turns the broker closed the channel: the
// session lost its tools and its model. More count_tokens requests than
// the refusal budget, then a Messages request, are each served, and the
// token budget is charged none of the counts.
func TestModelRouteCountTokensOutlastsTheRefusalBudget(t *testing.T) {
	const n = broker.MaxRefusals + 1
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: n + 1, Tokens: rigtest.ModelTokens})
	r.Grant(rigtest.ModelCapability)
	c := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r)))
	served := 0
	for i := range n {
		status, body, err := tryPost(c, "/v1/messages/count_tokens?beta=true", countTokens)
		if err != nil {
			t.Errorf("count_tokens %d of %d: %v", i+1, n, err)
			break
		}
		if status == 200 && body == `{"input_tokens":100}` {
			served++
		} else if i == 0 {
			t.Errorf("count_tokens %d of %d: %d %q", i+1, n, status, body)
		}
	}
	if served != n {
		t.Errorf("%d count_tokens requests of %d served", served, n)
	}
	status, body, err := tryPost(c, "/v1/messages?beta=true", allowed)
	if err != nil || status != 200 || !strings.Contains(body, "message_stop") {
		t.Fatalf("a Messages request after %d count_tokens: %d %q %v", n, status, body, err)
	}
	if got := len(r.Model.Received()); got != n+1 {
		t.Errorf("the model server received %d requests, want %d", got, n+1)
	}
}

// TestModelRouteCountTokens: Claude Code's count_tokens is served as
// part of the Messages route, with every property of a Messages call.
// It reaches the model server (a mock) at the registered resource
// followed by /count_tokens, never a path the agent chose, with no
// query, the key attached by the edge and none of the agent's own
// headers; the answer reaches the agent; the decision and the result
// (the model, 200, no tokens) are events. It spends one request of the
// budget and none of its tokens: the Messages call after it is served.
// Another sub-path, the OpenAI dialect's count, a model outside the
// list, a body naming no model and one naming MCP servers for the
// provider are refused before the server sees anything, and an answer
// that echoes the key is withheld.
func TestModelRouteCountTokens(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability, rigtest.OpenAICapability)
	for _, tc := range []struct {
		target, body string
		status       int
		code         string
	}{
		{"/v1/messages/count_tokens/x", countTokens, 404, "model_path_refused"},
		{"/v1/messages/count_tokensx", countTokens, 404, "model_path_refused"},
		{"/v1/messages/count_tokens/", countTokens, 404, "model_path_refused"},
		{"/v1/messages/count_tokens?beta=true&x=1", countTokens, 404, "model_path_refused"},
		{"/v1/responses/count_tokens", `{"model":"` + rigtest.OpenAIModel + `","input":"hi"}`, 404, "model_path_refused"},
		{"/v1/messages/count_tokens", `{"model":"claude-opus-4","messages":[]}`, 403, "model_not_allowed"},
		{"/v1/messages/count_tokens", `{"messages":[]}`, 400, "model_request_invalid"},
		{"/v1/messages/count_tokens", `{"model":"` + rigtest.AllowedModel + `","mcp_servers":[{"type":"url","url":"https://exfil.example/mcp","name":"x"}]}`, 403, "model_tool_refused"},
	} {
		if status, body := post(t, c, "POST", tc.target, tc.body); status != tc.status || !strings.Contains(body, `"refused: `+tc.code+`"`) {
			t.Errorf("POST %s %s: %d %q, want %d %s", tc.target, tc.body, status, body, tc.status, tc.code)
		}
	}
	if n := len(r.Model.Received()); n != 0 {
		t.Fatalf("the model server received %d refused requests", n)
	}
	status, body := post(t, c, "POST", "/v1/messages/count_tokens?beta=true", countTokens)
	if status != 200 || body != `{"input_tokens":100}` {
		t.Fatalf("count_tokens: %d %q", status, body)
	}
	got := r.Model.Received()
	if len(got) != 1 {
		t.Fatalf("the model server received %d requests, want 1", len(got))
	}
	req := got[0]
	if req.Method != "POST" || req.Path != "/v1/messages/count_tokens" || req.RawQuery != "" || !strings.HasPrefix(req.Host, "model.example.com:") ||
		req.Header.Get("Anthropic-Version") != "2023-06-01" || string(req.Body) != countTokens {
		t.Errorf("the model server got %s %s?%s host %s, headers %v, body %q", req.Method, req.Path, req.RawQuery, req.Host, req.Header, req.Body)
	}
	if k := req.Header.Get("X-Api-Key"); k != rigtest.ModelCanary {
		t.Errorf("the model server got x-api-key %q, want the key custody holds", k)
	}
	if req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" || strings.Contains(fmt.Sprint(req.Header), placeholder) {
		t.Errorf("the agent's own headers travelled: %v", req.Header)
	}
	// The budget's two other requests: a Messages call (refused, had the
	// count been charged as an answer without usage, the rest of the
	// budget) and one more count; then the request budget is spent.
	if status, body := post(t, c, "POST", "/v1/messages?beta=true", allowed); status != 200 {
		t.Fatalf("a Messages call after a count: %d %q", status, body)
	}
	if status, body := post(t, c, "POST", "/v1/messages/count_tokens?beta=true", countTokens); status != 200 {
		t.Fatalf("the budget's last request, a count: %d %q", status, body)
	}
	if status, body := post(t, c, "POST", "/v1/messages/count_tokens?beta=true", countTokens); status != 403 || !strings.Contains(body, "model_budget_exhausted") {
		t.Fatalf("a count past the request budget: %d %q", status, body)
	}
	var results []string
	approved := 0
	for _, ev := range r.Evidence.Events() {
		switch {
		case ev.Kind == authz.EvidenceModelResult:
			results = append(results, fmt.Sprintf("%s %s %s %d %s in=%d out=%d", ev.Capability, ev.Outcome, ev.Model, ev.Status, ev.Code, ev.InputTokens, ev.OutputTokens))
		case ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeApproved && ev.Model == rigtest.AllowedModel:
			approved++
		}
		if s := fmt.Sprintf("%+v", ev); strings.Contains(s, rigtest.ModelCanary) || strings.Contains(s, `"hi"`) {
			t.Errorf("an event holds the key or content: %s", s)
		}
	}
	m := rigtest.ModelCapability + " succeeded " + rigtest.AllowedModel + " 200 "
	if want := []string{m + " in=0 out=0", m + " in=100 out=10", m + " in=0 out=0"}; !slices.Equal(results, want) || approved != 3 {
		t.Errorf("results %q (%d approved), want %q", results, approved, want)
	}

	// A provider that echoes the key in the count's answer.
	r2 := rigtest.NewModel(t)
	r2.Grant(rigtest.ModelCapability)
	r2.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":100,"note":%q}`, req.Header.Get("X-Api-Key"))
	}))
	c2 := modelClient(t, rigtest.ServeBroker(t, mustBroker(t, r2)))
	_, echoed, _ := tryPost(c2, "/v1/messages/count_tokens?beta=true", countTokens)
	noLeak(t, "the count's answer", []byte(echoed))
	if res := waitResults(t, r2, 1); res[0].Code != "credential_echoed" || res[0].InputTokens+res[0].OutputTokens != 0 {
		t.Errorf("an echoed count's result: %s %d in=%d out=%d", res[0].Code, res[0].Status, res[0].InputTokens, res[0].OutputTokens)
	}
}
