package modelroute_test

import (
	"fmt"
	"net/http"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// The route reads an agent's request, checks its model against the
// session's, and keeps none of the agent's credential headers.
func ExampleParseRequest() {
	req, err := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages", "", []byte(`{"model":"claude-sonnet-4-5","stream":true}`))
	fmt.Println(req.Model, req.Stream, err)
	policy := modelroute.Policy{Models: []string{"claude-sonnet-4-5"}}
	fmt.Println(policy.Check(req))
	h := http.Header{"X-Api-Key": {"placeholder"}, "Anthropic-Version": {"2023-06-01"}, "Accept": {"*/*"}}
	fmt.Println(req.Headers(h))
	// Output:
	// claude-sonnet-4-5 true <nil>
	// <nil>
	// map[Accept:[text/event-stream] Anthropic-Version:[2023-06-01] Content-Type:[application/json]]
}

// A Gemini request names its model in the path: the route reads it
// there, and sends the request to the registration's resource followed
// by the checked model and method, never the agent's own path text.
func ExampleRequest_Upstream() {
	req, err := modelroute.ParseRequest(modelroute.Gemini, "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", []byte(`{"contents":[]}`))
	fmt.Println(req.Model, req.Stream, err)
	fmt.Println(req.Upstream("https://generativelanguage.example/v1beta/models"))
	// Output:
	// gemini-2.5-pro true <nil>
	// https://generativelanguage.example/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse
}

// A dialect serves its exact paths, Anthropic Messages' token count
// among them, and no sub-path.
func ExampleDialect_Serves() {
	for _, p := range []string{"/v1/messages", "/v1/messages/count_tokens", "/v1/messages/batches"} {
		fmt.Println(p, modelroute.AnthropicMessages.Serves(p))
	}
	fmt.Println(modelroute.Gemini.Serves("/v1beta/models/gemini-2.5-pro:generateContent"), modelroute.Gemini.Serves("/v1beta/models/a/b:generateContent"))
	// Output:
	// /v1/messages true
	// /v1/messages/count_tokens true
	// /v1/messages/batches false
	// true false
}
