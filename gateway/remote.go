package gateway

import (
	"context"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// send makes step 6's effect: one request through [Edge.Send], or, for a
// registration whose Protocol is [authz.MCP], the tools/call of its
// registered tool on the remote MCP server at its resource, made by the
// gateway as that server's client through the edge's [edge.RemoteTransport]
// (the endpoint pinned, the credential attached at the edge, every answer
// screened). Steps 1 to 5 and 7 are the same for both.
func (g *Gateway) send(ctx context.Context, out edge.Outbound) (*edge.Response, error) {
	reg, _ := g.cfg.Registry.Lookup(out.Action.Capability)
	if reg.Protocol != authz.MCP {
		return g.cfg.Edge.Send(ctx, out)
	}
	t, err := g.cfg.Edge.Remote(ctx, out)
	if err != nil {
		return nil, err
	}
	resp, err := mcpremote.Call(ctx, t, out.Action.Resource, reg.Tool.Name, out.Action.Body)
	if err := t.Finish(ctx, err); err != nil {
		return nil, err
	}
	return resp, nil
}
