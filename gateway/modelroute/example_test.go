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
	h := http.Header{"X-Api-Key": {"placeholder"}, "Anthropic-Version": {"2023-06-01"}}
	fmt.Println(modelroute.AnthropicMessages.Headers(h))
	// Output:
	// claude-sonnet-4-5 true <nil>
	// <nil>
	// map[Anthropic-Version:[2023-06-01]]
}
