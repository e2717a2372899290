package rigtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// The model route of a NewModel rig: its capability, the one model it
// allows and its budget per channel.
const (
	ModelCapability = "model.anthropic"
	AllowedModel    = "claude-sonnet-4-5"
	ModelRequests   = 3
	ModelTokens     = 1000
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
// Messages, streamed or whole, reports usage of 100 input and 10 output
// tokens, and records every request it receives.
type Model struct {
	// Base is https://model.example.com:PORT.
	Base string

	mu  sync.Mutex
	got []ModelRequest // guarded by mu
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

func (m *Model) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	m.mu.Lock()
	m.got = append(m.got, ModelRequest{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Host: req.Host, Header: req.Header.Clone(), Body: body})
	m.mu.Unlock()
	text := "hello from the scripted model"
	if bytes.Contains(body, []byte(EchoKey)) {
		text = "your key is " + req.Header.Get("X-Api-Key")
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
	fmt.Fprintf(w, modelStream, text)
}

// startModel starts the scripted model server.
func startModel(t TB) (*Model, *httptest.Server) {
	m := &Model{}
	srv := httptest.NewTLSServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

// modelRegistration is the rig's model route at base.
func modelRegistration(base string) authz.Registration {
	return authz.Registration{
		Capability: ModelCapability, Operation: "POST", Resource: base + "/v1/messages", Credential: ModelCred, Effect: authz.ReadOnly,
		Protocol: authz.ModelAPI,
		Tool:     authz.ToolDescriptor{Name: "model", Description: "The agent's own model.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Model:    authz.ModelRoute{Dialect: modelroute.AnthropicMessages, Models: []string{AllowedModel}, Requests: ModelRequests, Tokens: ModelTokens},
	}
}

// modelRules are the model Connection's egress rules: POST to the
// messages path of model.example.com at port, with the headers the
// dialect keeps.
func modelRules(port uint16) (*egress.Rules, error) {
	return egress.NewRules([]egress.Rule{{Host: "model.example.com", Port: port, PathPrefix: "/v1/messages", Methods: []string{"POST"},
		Headers: []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta"}}})
}
