package modelroute_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// A Meter reserves a request before anything is sent and charges the
// tokens the provider reported when it settles; a spent budget refuses
// the next request before it leaves.
func ExampleNewMeter() {
	ctx := context.Background()
	m := modelroute.NewMeter(modelroute.Budget{Requests: 1, Tokens: 10_000})
	req, _ := modelroute.ParseRequest(modelroute.AnthropicMessages, "POST", "/v1/messages", "",
		[]byte(`{"model":"claude-sonnet-4-5","max_tokens":1024}`))

	hold := m.Hold(req, len(`{"model":"claude-sonnet-4-5","max_tokens":1024}`))
	fmt.Println(m.Reserve(ctx, hold))
	u := m.Settle(req, hold, 200, modelroute.Usage{InputTokens: 120, OutputTokens: 300, Final: true})
	fmt.Println(u.InputTokens + u.OutputTokens)

	code, _ := checkfu.CodeOf(m.Allow())
	fmt.Println(code)
	// Output:
	// <nil>
	// 420
	// model_budget_exhausted
}
