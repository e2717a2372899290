package edge

import (
	"context"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/outbound"
)

// BenchPage is benchPage, for the external benchmarks.
var BenchPage = benchPage

// MintForTest makes the Authorized value the call pipeline would make for
// action through conn, spending nothing: only this package's tests can
// build it (the file compiles into test binaries alone), to reach the
// edge's own checks behind the pipeline's.
func MintForTest(conn Connection, action authz.Action, tool string, protocol authz.Protocol, lease authz.Lease, scope authz.LeaseScope) (Authorized, error) {
	c := &outbound.Call{Credential: conn.Credential, Rules: conn.Rules, Action: action, Digest: action.Digest(),
		Tool: tool, Protocol: protocol, Lease: lease, Scope: scope}
	// A request even for a remote MCP tool (the pipeline keeps none for
	// one), so that the edge's own protocol check is what refuses it.
	req, err := outbound.Build(context.Background(), action)
	if err != nil {
		return Authorized{}, err
	}
	c.Request = req
	return outbound.Mint(c), nil
}
