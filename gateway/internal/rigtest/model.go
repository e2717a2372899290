package rigtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// The model routes of a NewModel rig: their capabilities (Anthropic
// Messages, OpenAI Responses and Gemini on the same key and server), the one
// model each allows, and the budget per channel of each.
const (
	ModelCapability  = "model.anthropic"
	AllowedModel     = "claude-sonnet-4-5"
	OpenAICapability = "model.openai"
	OpenAIModel      = "gpt-5.4"
	GeminiCapability = "model.gemini"
	GeminiModel      = "gemini-2.5-pro"
	ModelRequests    = 3
	ModelTokens      = 1000
)

// ModelCanary is the model key custody holds for the model route; no
// byte of it may reach sandbox code, and the scripted model server must
// see it on every request.
const ModelCanary = "sk-ant-MODELCANARY-0123456789abcdefXYZ"

// ModelCred is the model key's custody binding.
var ModelCred = custody.Binding{Namespace: "acme", Integration: "anthropic", Handle: address.MustParseHandle("ch_baaaaaaaaaaaaaaaaaaaaaaaaa")}

// EchoKey, in a request's body, makes the scripted model server stream
// the key it received back in a text delta: a provider that echoes the
// key, for the route's screen to catch.
const EchoKey = "PLEASE-ECHO-THE-KEY"

// A ModelRequest is one request the scripted model server received.
type ModelRequest struct {
	Method, Path, RawQuery, Host string
	Header                       http.Header
	Body                         []byte
}

// A Model is the rig's scripted model server, a mock (a loopback TLS
// httptest server reached as model.example.com): it speaks Anthropic
// Messages, streamed or whole, at /v1/messages (and its token count at
// /v1/messages/count_tokens, answered {"input_tokens":100} with no
// usage), OpenAI Responses, streamed, at /v1/responses, and Gemini at
// /v1beta/models/{model}:generateContent (whole) and
// :streamGenerateContent (server-sent events), reports usage of 100
// input and 10 output tokens, and records every request it receives.
type Model struct {
	// Base is https://model.example.com:PORT.
	Base string
	// Direct is the server's own URL (https://127.0.0.1:PORT) and
	// DirectClient a client that trusts it: the same server without the
	// route, for a benchmark's baseline.
	Direct       string
	DirectClient *http.Client

	mu      sync.Mutex
	got     []ModelRequest // guarded by mu
	deltas  int            // guarded by mu: text deltas per stream; 0 means 1
	handler http.Handler   // guarded by mu: answers in the place of the script
}

// SetHandler makes h answer every later request in the place of the
// script (a hostile or scripted provider); the requests are still
// recorded, and h reads the body the server already read.
func (m *Model) SetHandler(h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handler = h
}

// SetDeltas makes each streamed answer carry n text deltas (a long
// stream, for a benchmark). It does not record the requests then.
func (m *Model) SetDeltas(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deltas = n
}

// Received returns the requests the model server received, in order.
func (m *Model) Received() []ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelRequest(nil), m.got...)
}

// modelStream is the server's answer to a streamed request; %s is the
// text of the one delta.
const modelStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":10}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// responsesStream is the server's OpenAI Responses stream; %s is the
// text of the one delta.
const responsesStream = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":%q}\n\n" +
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":100,\"output_tokens\":10}}}\n\n"

// modelDelta is one more Anthropic text delta of a long stream.
const modelDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"more text from the scripted model, one delta of a long stream\"}}\n\n"

func (m *Model) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	m.mu.Lock()
	deltas, h := m.deltas, m.handler
	if deltas == 0 {
		m.got = append(m.got, ModelRequest{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Host: req.Host, Header: req.Header.Clone(), Body: body})
	}
	m.mu.Unlock()
	if h != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, req)
		return
	}
	text := "hello from the scripted model"
	if bytes.Contains(body, []byte(EchoKey)) {
		text = "your key is " + req.Header.Get("X-Api-Key") + req.Header.Get("Authorization") + req.Header.Get("X-Goog-Api-Key")
	}
	if strings.HasPrefix(req.URL.Path, "/v1beta/models/") {
		serveGemini(w, req, text)
		return
	}
	if strings.HasSuffix(req.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
		return
	}
	if req.URL.Path == "/v1/responses" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, responsesStream, text)
		return
	}
	var fields struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &fields)
	if !fields.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"message","content":[{"type":"text","text":%q}],"usage":{"input_tokens":100,"output_tokens":10}}`, text)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if deltas <= 1 {
		fmt.Fprintf(w, modelStream, text)
		return
	}
	// A long stream: the first event at once, then the deltas.
	start, rest, _ := strings.Cut(fmt.Sprintf(modelStream, text), "\n\n")
	io.WriteString(w, start+"\n\n")
	w.(http.Flusher).Flush()
	bw := bufio.NewWriterSize(w, 32<<10)
	for range deltas - 1 {
		bw.WriteString(modelDelta)
	}
	bw.WriteString(rest)
	bw.Flush()
}

// geminiChunk is a Gemini answer (or stream chunk) with one text part;
// %q is its text, and its usage is final.
const geminiChunk = `{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":8,"thoughtsTokenCount":2,"totalTokenCount":110}}`

// serveGemini answers a Gemini request: a stream of two chunks, the
// first with the counts so far and the second the final ones, or a
// whole answer.
func serveGemini(w http.ResponseWriter, req *http.Request, text string) {
	if strings.HasSuffix(req.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"...\"}]},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":100,\"candidatesTokenCount\":1,\"totalTokenCount\":101}}\r\n\r\n")
		fmt.Fprintf(w, "data: "+geminiChunk+"\r\n\r\n", text)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, geminiChunk, text)
}

// startModel starts the scripted model server.
func startModel(t TB) (*Model, *httptest.Server) {
	m := &Model{}
	srv := httptest.NewTLSServer(m)
	t.Cleanup(srv.Close)
	m.Direct, m.DirectClient = srv.URL, srv.Client()
	return m, srv
}

// modelRegistrations are the rig's model routes at base, each with
// budget (nil means ModelRequests and ModelTokens).
func modelRegistrations(base string, budget *modelroute.Budget) []authz.Registration {
	b := modelroute.Budget{Requests: ModelRequests, Tokens: ModelTokens}
	if budget != nil {
		b = *budget
	}
	reg := func(capability, path, tool string, d modelroute.Dialect, model string) authz.Registration {
		return authz.Registration{
			Capability: capability, Operation: "POST", Resource: base + path, Credential: ModelCred, Effect: authz.ReadOnly,
			Protocol: authz.ModelAPI,
			Tool:     authz.ToolDescriptor{Name: tool, Description: "The agent's own model.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Model:    authz.ModelRoute{Dialect: d, Models: []string{model}, Requests: b.Requests, Tokens: b.Tokens},
		}
	}
	return []authz.Registration{
		reg(ModelCapability, "/v1/messages", "model", modelroute.AnthropicMessages, AllowedModel),
		reg(OpenAICapability, "/v1/responses", "model-openai", modelroute.OpenAIResponses, OpenAIModel),
		reg(GeminiCapability, "/v1beta/models", "model-gemini", modelroute.Gemini, GeminiModel),
	}
}

// modelRules are the model Connection's egress rules: POST to the
// three dialects' paths of model.example.com at port (prefixes matched on
// segment boundaries, so Messages' count_tokens too), with the headers
// the dialects keep.
func modelRules(port uint16) (*egress.Rules, error) {
	return egress.NewRules([]egress.Rule{
		{Host: "model.example.com", Port: port, PathPrefix: "/v1/messages", Methods: []string{"POST"},
			Headers: []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta"}},
		{Host: "model.example.com", Port: port, PathPrefix: "/v1/responses", Methods: []string{"POST"},
			Headers: []string{"Content-Type", "Accept", "Openai-Beta"}},
		{Host: "model.example.com", Port: port, PathPrefix: "/v1beta/models", Methods: []string{"POST"},
			Headers: []string{"Content-Type", "Accept"}},
	})
}
