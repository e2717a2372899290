package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// BenchmarkGatewayPath compares, in the same run against the same
// loopback TLS provider, the whole gateway path of an allowed read_only
// call (channel, permission, registration, arguments, lease, decision
// event, edge, result event) with the bare Edge.Call of the same request
// (docs/benchmarks/gateway.md).
func BenchmarkGatewayPath(b *testing.B) {
	r := rigtest.New(b)
	r.Grant("issues.list")
	ch := r.Channel(rigtest.Member())
	args := json.RawMessage(`{"state":"open"}`)
	pt := r.Tools[0]
	inv := edge.Invocation{
		Connection: r.Conn, Lease: r.Lease.ID,
		Scope: authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: rigtest.Member().Actor},
		Call:  authz.ToolCall{Capability: pt.Capability, Tool: pt.Tool, Operation: pt.Operation, Resource: pt.Resource, Arguments: args},
	}
	ctx := context.Background()
	b.Run("edge", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.EdgeCall(ctx, inv); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		for b.Loop() {
			if _, err := ch.Call(ctx, "issues.list", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
