package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// BenchmarkGatewayPath measures the whole gateway path of an allowed
// read_only call (channel, permission, registration, arguments, rules,
// lease, decision event, edge, result event) against a loopback TLS
// provider. The pipeline's ratio to the bare egress client is measured in
// package custody/edge (docs/benchmarks/custody-edge.md).
func BenchmarkGatewayPath(b *testing.B) {
	r := rigtest.New(b)
	r.Grant("issues.list")
	ch := r.Channel(rigtest.Member())
	args := json.RawMessage(`{"state":"open"}`)
	ctx := context.Background()
	b.Run("gateway", func(b *testing.B) {
		for b.Loop() {
			if _, err := ch.Call(ctx, "issues.list", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
