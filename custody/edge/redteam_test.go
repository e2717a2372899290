package edge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/edge"
)

// The red team's attacks on the outbound edge (docs/changes/wt-rtpipe.md).

// TestZeroRemoteTransportNeitherPanicsNorSends: a RemoteTransport that
// Edge.Remote did not make (nil, or the zero value) reports no endpoint,
// tool or arguments, sends nothing and finishes with a refusal; none of
// its exported methods panics.
func TestZeroRemoteTransportNeitherPanicsNorSends(t *testing.T) {
	for _, tr := range []*edge.RemoteTransport{nil, {}} {
		if tr.Endpoint() != "" || tr.Tool() != "" || tr.Arguments() != nil {
			t.Errorf("%p: a transport no edge made reports an endpoint, tool or arguments", tr)
		}
		req, err := http.NewRequest("POST", "https://api.example.com/v1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := tr.RoundTrip(req); resp != nil || err == nil {
			t.Errorf("%p: RoundTrip = %v, %v; want a refusal", tr, resp, err)
		}
		if err := tr.Finish(context.Background(), nil); err == nil {
			t.Errorf("%p: Finish succeeded", tr)
		}
	}
}
