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
// which the same bytes name another model or tool), and it passes no
// Accept (which could ask for a format the route does not read usage
// from).
func TestGeminiContentTypeFixed(t *testing.T) {
	for _, in := range []http.Header{
		{},
		{"Content-Type": {"application/x-www-form-urlencoded"}},
		{"Content-Type": {"application/json; charset=utf-16"}, "Accept": {"application/x-protobuf"}},
		{"Content-Type": {"application/json", "multipart/related"}, "Accept": {"application/json+protobuf"}},
		{"content-type": {"text/plain"}},
	} {
		out := modelroute.Gemini.Headers(in)
		if len(out) != 1 || len(out["Content-Type"]) != 1 || out.Get("Content-Type") != modelroute.GeminiContentType {
			t.Errorf("%v: sent %v, want Content-Type %s alone", in, out, modelroute.GeminiContentType)
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
