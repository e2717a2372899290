package broker_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// geminiPost sends one Gemini request as Gemini CLI would, with its
// placeholder key in x-goog-api-key (and in every other key and routing
// header an agent might try), none of which may travel.
func geminiPost(t *testing.T, c *http.Client, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://generativelanguage.googleapis.com"+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"X-Goog-Api-Key", "X-Api-Key", "X-Goog-User-Project", "X-Goog-Api-Client", "Cookie"} {
		req.Header.Set(h, placeholder)
	}
	req.Header.Set("Authorization", "Bearer "+placeholder)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", target, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// TestModelRouteGemini: Gemini requests, which name the model in the
// path, reach the scripted model server (a mock) at the registered
// resource followed by the checked model and method (and alt=sse for a
// stream), with the key attached by the edge in x-goog-api-key and none
// of the agent's headers; a model outside the list, another path,
// method or query, and a provider-side tool are refused before the
// server sees anything; a stream echoing the key is cut; the budget
// holds; the events carry the model and the usage read from
// usageMetadata.
func TestModelRouteGemini(t *testing.T) {
	// Every route granted: a path no route serves falls to the first
	// (Anthropic's), which refuses it by its path.
	r, c := modelBroker(t, rigtest.ModelCapability, rigtest.OpenAICapability, rigtest.GeminiCapability)
	m := rigtest.GeminiModel
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"mcp_checkfu_list_issues"}]}],"generationConfig":{"maxOutputTokens":64}}`
	for _, tc := range []struct{ target, body, code string }{
		{"/v1beta/models/gemini-2.5-flash:generateContent", body, "model_not_allowed"},
		{"/v1beta/models/" + m + ":countTokens", body, "model_path_refused"},
		{"/v1beta/models/" + m + ":generateContent?key=" + placeholder, body, "model_path_refused"},
		{"/v1beta/models/" + m + ":streamGenerateContent", body, "model_path_refused"},
		{"/v1beta/models/..%2Ffiles:generateContent", body, "model_path_refused"},
		{"/v1beta/models/a/../" + m + ":generateContent", body, "model_path_refused"},
		{"/v1beta/files", body, "model_path_refused"},
		{"/v1beta/models/" + m + ":generateContent", `{"tools":[{"urlContext":{}}]}`, "model_tool_refused"},
		{"/v1beta/models/" + m + ":generateContent", `{"contents":[{"parts":[{"fileData":{"fileUri":"https://exfil.example/x"}}]}]}`, "model_tool_refused"},
		{"/v1beta/models/" + m + ":generateContent", `{"model":"models/other"}`, "model_request_invalid"},
	} {
		if status, got := geminiPost(t, c, tc.target, tc.body); status < 400 || !strings.Contains(got, `"refused: `+tc.code+`"`) {
			t.Errorf("%s %s: %d %q, want %s", tc.target, tc.body, status, got, tc.code)
		}
	}
	if n := len(r.Model.Received()); n != 0 {
		t.Fatalf("the model server received %d refused requests", n)
	}
	status, got := geminiPost(t, c, "/v1beta/models/"+m+":streamGenerateContent?alt=sse", body)
	if status != 200 || !strings.Contains(got, "hello from the scripted model") || !strings.Contains(got, `"finishReason":"STOP"`) {
		t.Fatalf("an allowed stream: %d %q", status, got)
	}
	noLeak(t, "the stream", []byte(got))
	status, got = geminiPost(t, c, "/v1beta/models/"+m+":generateContent", body)
	if status != 200 || !strings.Contains(got, "hello from the scripted model") {
		t.Fatalf("an allowed answer: %d %q", status, got)
	}
	noLeak(t, "the answer", []byte(got))
	received := r.Model.Received()
	if len(received) != 2 {
		t.Fatalf("the model server received %d requests, want 2", len(received))
	}
	for i, want := range []struct{ path, query, accept string }{{"/v1beta/models/" + m + ":streamGenerateContent", "alt=sse", "text/event-stream"}, {"/v1beta/models/" + m + ":generateContent", "", "application/json"}} {
		req := received[i]
		if req.Method != "POST" || req.Path != want.path || req.RawQuery != want.query || string(req.Body) != body || !strings.HasPrefix(req.Host, "model.example.com:") {
			t.Errorf("request %d: %s %s?%s host %s body %q", i+1, req.Method, req.Path, req.RawQuery, req.Host, req.Body)
		}
		if k := req.Header.Get("X-Goog-Api-Key"); k != rigtest.ModelCanary {
			t.Errorf("request %d: x-goog-api-key %q, want the key custody holds", i+1, k)
		}
		if a := req.Header.Values("Accept"); len(a) != 1 || a[0] != want.accept {
			t.Errorf("request %d: Accept %q, want the route's %q", i+1, a, want.accept)
		}
		for name, vs := range req.Header {
			if name != "X-Goog-Api-Key" && name != "Content-Type" && name != "Accept" && name != "Accept-Encoding" && name != "User-Agent" && name != "Content-Length" {
				t.Errorf("request %d: header %s travelled", i+1, name)
			}
			for _, v := range vs {
				if strings.Contains(v, placeholder) {
					t.Errorf("request %d: the agent's placeholder reached the model server in %s", i+1, name)
				}
			}
		}
	}
	// A provider echoing the key: the stream is cut before it.
	req, _ := http.NewRequest("POST", "http://door/v1beta/models/"+m+":streamGenerateContent?alt=sse", strings.NewReader(`{"contents":[{"parts":[{"text":"`+rigtest.EchoKey+`"}]}]}`))
	var echoed []byte
	if resp, err := c.Do(req); err == nil {
		echoed, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	noLeak(t, "the echoed stream", echoed)
	if strings.Contains(string(echoed), "STOP") {
		t.Errorf("the echoing stream was not cut: %q", echoed)
	}
	// The budget (rigtest.ModelRequests) is spent.
	if status, got := geminiPost(t, c, "/v1beta/models/"+m+":generateContent", body); status != 403 || !strings.Contains(got, "model_budget_exhausted") {
		t.Errorf("a request over the budget: %d %q", status, got)
	}
	var results []string
	for _, ev := range r.Evidence.Events() {
		if ev.Kind == authz.EvidenceModelResult {
			results = append(results, fmt.Sprintf("%s %s %s %d %s in=%d out=%d", ev.Capability, ev.Outcome, ev.Model, ev.Status, ev.Code, ev.InputTokens, ev.OutputTokens))
		}
		if s := fmt.Sprintf("%+v", ev); strings.Contains(s, rigtest.ModelCanary) || strings.Contains(s, placeholder) || strings.Contains(s, "hello from") {
			t.Errorf("an event holds the key, the placeholder or content: %s", s)
		}
	}
	want := []string{
		"model.gemini succeeded " + m + " 200  in=100 out=10",
		"model.gemini succeeded " + m + " 200  in=100 out=10",
		"model.gemini failed " + m + " 200 credential_echoed in=100 out=10",
	}
	if !slices.Equal(results, want) {
		t.Errorf("results:\n got %q\nwant %q", results, want)
	}
}
