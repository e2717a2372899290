package modelroute_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// geminiResource is a Gemini registration's resource.
const geminiResource = "https://model.example.com/v1beta/models"

// TestParseGemini: a Gemini request names its model and method in the
// path, exactly; the route reads the model from there, checks it, and
// builds the upstream URL from the resource and the checked name alone.
func TestParseGemini(t *testing.T) {
	g := modelroute.Gemini
	for _, c := range []struct {
		path, query, body, upstream string
		stream                      bool
	}{
		{"/v1beta/models/gemini-2.5-pro:generateContent", "", `{"contents":[]}`, geminiResource + "/gemini-2.5-pro:generateContent", false},
		{"/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, geminiResource + "/gemini-2.5-pro:streamGenerateContent?alt=sse", true},
		{"/v1beta/models/gemini-2.5-flash-lite:generateContent", "", `{"model":"models/gemini-2.5-flash-lite"}`, geminiResource + "/gemini-2.5-flash-lite:generateContent", false},
		{"/v1beta/models/m_1.0:generateContent", "", `{"model":"m_1.0","tools":[{"functionDeclarations":[]},{"function_declarations":[]}]}`, geminiResource + "/m_1.0:generateContent", false},
		{"/v1beta/models/" + strings.Repeat("m", modelroute.MaxGeminiModelBytes) + ":generateContent", "", `{}`, geminiResource + "/" + strings.Repeat("m", modelroute.MaxGeminiModelBytes) + ":generateContent", false},
	} {
		r, err := modelroute.ParseRequest(g, "POST", c.path, c.query, []byte(c.body))
		if err != nil || r.Stream != c.stream || r.Dialect != g || r.Upstream(geminiResource) != c.upstream || !g.Serves(c.path) {
			t.Errorf("%s?%s %s: %+v (upstream %q), %v", c.path, c.query, c.body, r, r.Upstream(geminiResource), err)
		}
	}
	for _, c := range []struct {
		method, path, query, body string
		code                      error
	}{
		{"GET", "/v1beta/models/m:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:countTokens", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:embedContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContentx", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContent:x", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContent/x", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/a/b:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/../files:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/..:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/.:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/.hidden:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/a..b:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/a%2Fb:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/a b:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/a?b:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m\x00:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/" + strings.Repeat("m", modelroute.MaxGeminiModelBytes+1) + ":generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/tunedModels/m:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/models/m:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "//v1beta/models/m:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models//m:generateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1/messages", "", `{"model":"m"}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContent", "alt=sse", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContent", "key=placeholder", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:streamGenerateContent", "", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:streamGenerateContent", "alt=json", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:streamGenerateContent", "alt=sse&key=k", `{}`, modelroute.CodeModelPathRefused},
		{"POST", "/v1beta/models/m:generateContent", "", `[]`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `null`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `{"contents":[],"contents":[]}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", "{\"x\":\"\xff\"}", modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `{"Tools":[]}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `{"model":"other"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `{"model":"models/other"}`, modelroute.CodeModelRequestInvalid},
		{"POST", "/v1beta/models/m:generateContent", "", `{"generationConfig":{"maxOutputTokens":"9"}}`, modelroute.CodeModelRequestInvalid},
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, c.method, c.path, c.query, []byte(c.body)); !errors.Is(err, c.code) {
			t.Errorf("%s %q?%s %q: %v, want %v", c.method, c.path, c.query, c.body, err, c.code)
		}
	}
	// A Request ParseRequest would not have made forms no upstream URL.
	for _, r := range []modelroute.Request{
		{Dialect: g, Model: "../files", Method: modelroute.GeminiGenerate},
		{Dialect: g, Model: "m", Method: "countTokens"},
		{Dialect: g, Model: "m"},
	} {
		if u := r.Upstream(geminiResource); u != "" {
			t.Errorf("%+v: upstream %q", r, u)
		}
	}
	if g.Path() != "/v1beta/models" || g.KeyHeader() != "X-Goog-Api-Key" || g.CountTokensPath() != "" {
		t.Errorf("Gemini: path %q, key header %q, count path %q", g.Path(), g.KeyHeader(), g.CountTokensPath())
	}
}

// TestGeminiRefusesProviderTools: a Gemini request may declare the
// agent's own functions and nothing the provider would run or fetch on
// its own: its search, URL context, code execution, file data or
// cached content, in either spelling the API reads.
func TestGeminiRefusesProviderTools(t *testing.T) {
	const path = "/v1beta/models/m:generateContent"
	for _, body := range []string{
		`{"tools":[{"urlContext":{}}]}`,
		`{"tools":[{"url_context":{}}]}`,
		`{"tools":[{"googleSearch":{}}]}`,
		`{"tools":[{"google_search":{}}]}`,
		`{"tools":[{"googleSearchRetrieval":{}}]}`,
		`{"tools":[{"codeExecution":{}}]}`,
		`{"tools":[{"functionDeclarations":[]},{"fileSearch":{}}]}`,
		`{"tools":[{"functionDeclarations":[],"googleMaps":{}}]}`,
		`{"tools":[{"mcpServers":[{"url":"https://exfil.example/mcp"}]}]}`,
		`{"contents":[{"parts":[{"text":"x"},{"fileData":{"fileUri":"https://exfil.example/x"}}]}]}`,
		`{"contents":[{"parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}]}`,
		`{"systemInstruction":{"parts":[{"fileData":{"fileUri":"https://exfil.example/x"}}]}}`,
		`{"system_instruction":{"parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}}`,
		`{"cachedContent":"cachedContents/another-session"}`,
		`{"cached_content":"cachedContents/another-session"}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "", []byte(body)); !errors.Is(err, modelroute.CodeModelToolRefused) {
			t.Errorf("%s: %v, want %v", body, err, modelroute.CodeModelToolRefused)
		}
	}
	for _, body := range []string{
		`{"tools":[{"functionDeclarations":[{"name":"mcp_checkfu_list_issues","parameters":{"type":"object"}}]}]}`,
		`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}},{"fileData":null}]}],"cachedContent":null}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "", []byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// TestGeminiMaxOutput: the output cap is generationConfig's
// maxOutputTokens, the larger of the two spellings.
func TestGeminiMaxOutput(t *testing.T) {
	const path = "/v1beta/models/m:streamGenerateContent"
	for body, want := range map[string]int64{
		`{}`:                                     0,
		`{"generationConfig":{"temperature":0}}`: 0,
		`{"generationConfig":{"maxOutputTokens":64}}`:                                           64,
		`{"generation_config":{"max_output_tokens":65}}`:                                        65,
		`{"generationConfig":{"maxOutputTokens":10,"max_output_tokens":70}}`:                    70,
		`{"generationConfig":{"maxOutputTokens":80},"generation_config":{"maxOutputTokens":5}}`: 80,
		`{"generationConfig":{"maxOutputTokens":-3}}`:                                           0,
	} {
		r, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "alt=sse", []byte(body))
		if err != nil || r.MaxOutput != want || r.Bytes != int64(len(body)) {
			t.Errorf("%s: %+v, %v, want max output %d", body, r, err, want)
		}
	}
}

// TestGeminiHeaders: a Gemini request keeps none of its headers (its
// Content-Type and Accept are the route's); its own key and project
// headers never travel.
func TestGeminiHeaders(t *testing.T) {
	in := http.Header{}
	for _, h := range []string{"Content-Type", "Accept", "X-Goog-Api-Key", "x-goog-api-key", "X-Goog-User-Project", "X-Goog-Api-Client", "Authorization", "X-Api-Key", "Cookie", "X-Forwarded-For", "User-Agent"} {
		in[h] = []string{"v"}
	}
	out := modelroute.Request{Dialect: modelroute.Gemini}.Headers(in)
	if len(out) != 2 || out.Get("Content-Type") != modelroute.ContentType || out.Get("Accept") != modelroute.AcceptJSON {
		t.Errorf("kept %v", out)
	}
}

// geminiChunk is one Gemini stream chunk reporting cumulative counts.
func geminiChunk(prompt, candidates, thoughts int64, finish string) string {
	fr := ""
	if finish != "" {
		fr = `,"finishReason":"` + finish + `"`
	}
	return fmt.Sprintf("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}],\"role\":\"model\"}%s}],\"usageMetadata\":{\"promptTokenCount\":%d,\"candidatesTokenCount\":%d,\"thoughtsTokenCount\":%d,\"totalTokenCount\":%d}}\r\n\r\n",
		fr, prompt, candidates, thoughts, prompt+candidates+thoughts)
}

// TestGeminiUsage: a Gemini stream reports the counts so far in each
// chunk's usageMetadata and its final counts in the chunk that ends it
// (a finishReason); a whole answer, its counts once.
func TestGeminiUsage(t *testing.T) {
	stream := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}],\"usageMetadata\":{\"promptTokenCount\":100,\"totalTokenCount\":100}}\r\n\r\n" +
		geminiChunk(100, 4, 2, "") + geminiChunk(100, 9, 3, "STOP")
	var out bytes.Buffer
	u, err := modelroute.Relay(&out, nil, strings.NewReader(stream), modelroute.Gemini, nil)
	if err != nil || u != (modelroute.Usage{InputTokens: 100, OutputTokens: 12, Final: true}) || out.String() != stream {
		t.Errorf("stream: %+v, %v", u, err)
	}
	// Cut before the chunk that ends it: not final.
	cut := geminiChunk(100, 4, 0, "")
	if u, err := modelroute.Relay(&out, nil, strings.NewReader(cut), modelroute.Gemini, nil); err != nil || u != (modelroute.Usage{InputTokens: 100, OutputTokens: 4}) {
		t.Errorf("cut: %+v, %v", u, err)
	}
	answer := `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":90,"toolUsePromptTokenCount":10,"candidatesTokenCount":7,"thoughtsTokenCount":3}}`
	out.Reset()
	if u, err := modelroute.RelayAnswer(&out, strings.NewReader(answer), modelroute.Gemini, nil); err != nil || u != (modelroute.Usage{InputTokens: 100, OutputTokens: 10, Final: true}) || out.String() != answer {
		t.Errorf("answer: %+v, %v", u, err)
	}
	// Another dialect's usage member is not Gemini's.
	if u, _ := modelroute.RelayAnswer(&out, strings.NewReader(`{"usage":{"input_tokens":5,"output_tokens":5},"candidates":[{"finishReason":"STOP"}]}`), modelroute.Gemini, nil); u != (modelroute.Usage{}) {
		t.Errorf("foreign usage read: %+v", u)
	}
}

// TestGeminiUsageProperty: whatever cumulative counts a stream's chunks
// report, the relay reads the last chunk's, never negative, and final
// exactly when a chunk ended the answer.
func TestGeminiUsageProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "chunks")
		var s strings.Builder
		var want modelroute.Usage
		for i := range n {
			p := rapid.Int64Range(-5, 1<<40).Draw(t, "prompt")
			c := rapid.Int64Range(-5, 1<<40).Draw(t, "candidates")
			th := rapid.Int64Range(-5, 1<<40).Draw(t, "thoughts")
			finish := ""
			if rapid.Bool().Draw(t, "finish") || i == n-1 && rapid.Bool().Draw(t, "last finish") {
				finish = "STOP"
				want.Final = true
			}
			s.WriteString(geminiChunk(p, c, th, finish))
			want.InputTokens = max(p, 0)
			want.OutputTokens = max(c, 0) + max(th, 0)
		}
		u, err := modelroute.Relay(&bytes.Buffer{}, nil, strings.NewReader(s.String()), modelroute.Gemini, nil)
		if err != nil || u != want {
			t.Fatalf("%+v, %v, want %+v", u, err, want)
		}
	})
}

// FuzzParseGemini: no input panics, and an accepted Gemini request's
// upstream URL is the resource followed by exactly the path the agent
// sent past the dialect's path (a checked model and method), and the
// SSE query for a stream alone: never another path, segment or query.
func FuzzParseGemini(f *testing.F) {
	f.Add("/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", `{"contents":[]}`)
	f.Add("/v1beta/models/gemini-2.5-pro:generateContent", "", `{"model":"models/gemini-2.5-pro"}`)
	f.Add("/v1beta/models/../x:generateContent", "", `{}`)
	f.Add("/v1beta/models/m:generateContent", "", `{"tools":[{"urlContext":{}}]}`)
	f.Add("/v1beta/models/m:generateContent", "", `{"contents":[{"parts":[{"fileData":{}}]}]}`)
	f.Fuzz(func(t *testing.T, path, query, body string) {
		r, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, query, []byte(body))
		if err != nil {
			return
		}
		want := "https://model.example.com" + path
		if r.Stream {
			want += "?" + modelroute.GeminiSSEQuery
		}
		if u := r.Upstream(geminiResource); u != want || r.Model == "" || strings.ContainsAny(r.Model, "/%:?#") || strings.Contains(r.Model, "..") {
			t.Fatalf("accepted %q?%q %q as %+v, upstream %q", path, query, body, r, u)
		}
	})
}
