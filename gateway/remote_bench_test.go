package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// BenchmarkGatewayRemote compares, in one run over loopback TLS, an
// allowed read_only call of a plain registration with one of a remote MCP
// tool, both through the whole gateway path. A remote call is a whole
// MCP session (handshake, tools/call, DELETE), each exchange opening,
// attaching and screening the credential.
func BenchmarkGatewayRemote(b *testing.B) {
	r := rigtest.NewRemote(b)
	r.Grant("issues.list")
	r.Grant("remote.search")
	ch := r.Channel(rigtest.Member())
	ctx := context.Background()
	for _, bc := range []struct{ name, capability, args string }{
		{"plain", "issues.list", `{"state":"open"}`},
		{"remote", "remote.search", `{"query":"bugs"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ch.Call(ctx, bc.capability, json.RawMessage(bc.args)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
