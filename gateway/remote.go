package gateway

import (
	"context"

	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// remoteCall is the gateway's [pipeline.RemoteClient]: for a registration
// whose Protocol is authz.MCP, the pipeline's edge step is the tools/call
// of its registered tool on the remote MCP server at its resource, made
// by the gateway as that server's client through the edge's
// [edge.RemoteTransport] (the endpoint pinned, the credential attached at
// the edge, every answer screened). Every other step is the same as for
// a plain call.
func remoteCall(ctx context.Context, t *edge.RemoteTransport) (*edge.Response, error) {
	return mcpremote.Call(ctx, t, t.Endpoint(), t.Tool(), t.Arguments())
}
