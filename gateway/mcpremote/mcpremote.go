package mcpremote

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// clientName is the name the gateway gives itself in the remote
// server's initialize.
const clientName = "checkfu-gateway"

// ResultContentType is the Content-Type of the [edge.Response] that
// [Call] returns: its body is the JSON of an MCP CallToolResult
// (content, structuredContent, isError).
const ResultContentType = "application/vnd.checkfu.mcp-result+json"

// MaxCallDuration bounds one [Call], handshake and closing included,
// whatever the caller's context allows: a remote server can answer every
// HTTP exchange promptly (so that no exchange's own timeout fires) and
// still never send the tools/call's response, which would otherwise hold
// the call, and the sandbox's tools/call, open for as long as the
// caller's context lives. Each exchange is also bounded, by the edge's
// egress client (60 seconds unless configured).
const MaxCallDuration = 2 * time.Minute

// maxCallDuration is MaxCallDuration; tests shorten it.
var maxCallDuration = MaxCallDuration

// Call runs one tools/call of tool, with args, on the remote MCP server at
// endpoint, sending every request through rt. It returns the tool's
// result as a response with status 200 and a [ResultContentType] body; a
// result the tool flagged as an error is still a result (IsError set). A
// call the transport refused, or that failed on the way, is that error;
// one the server did not complete is refused with [CodeRemoteCallFailed].
// The session is closed before Call returns, and Call returns within
// [MaxCallDuration].
func Call(ctx context.Context, rt http.RoundTripper, endpoint, tool string, args json.RawMessage) (*edge.Response, error) {
	if rt == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "mcpremote: Call needs a transport")
	}
	ctx, cancel := context.WithTimeout(ctx, maxCallDuration)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "v1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	transport := &mcp.StreamableClientTransport{
		Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // the edge refuses redirects already; this client never follows one
		}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, failed(err, "mcpremote: the remote MCP server did not complete the handshake")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	// The result is in hand: a session that does not close cleanly does
	// not undo it. (A DELETE the transport refused still fails the call:
	// edge.RemoteTransport.Finish reports it.)
	_ = cs.Close()
	if err != nil {
		return nil, failed(err, "mcpremote: the remote MCP server did not complete the call")
	}
	content, err := withoutMeta(res.Content)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(&mcp.CallToolResult{Content: content, StructuredContent: res.StructuredContent, IsError: res.IsError})
	if err != nil {
		return nil, checkfu.Refuse(CodeRemoteCallFailed, "mcpremote: the remote tool's result does not encode")
	}
	return &edge.Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {ResultContentType}}, Body: body}, nil
}

// withoutMeta returns a copy of a tool result's content with no _meta of
// the remote server's, on any item or an embedded resource's contents:
// _meta can steer the client that renders a result (an MCP App's UI
// resource, say), and the sandbox's client is not the remote server's to
// steer. An item no tool result may hold (tool_use and tool_result belong
// to sampling messages) is refused with [CodeRemoteCallFailed].
func withoutMeta(in []mcp.Content) ([]mcp.Content, error) {
	out := make([]mcp.Content, 0, len(in))
	for _, c := range in {
		switch c := c.(type) {
		case *mcp.TextContent:
			x := *c
			x.Meta = nil
			out = append(out, &x)
		case *mcp.ImageContent:
			x := *c
			x.Meta = nil
			out = append(out, &x)
		case *mcp.AudioContent:
			x := *c
			x.Meta = nil
			out = append(out, &x)
		case *mcp.ResourceLink:
			x := *c
			x.Meta = nil
			out = append(out, &x)
		case *mcp.EmbeddedResource:
			x := *c
			x.Meta = nil
			if c.Resource != nil {
				r := *c.Resource
				r.Meta = nil
				x.Resource = &r
			}
			out = append(out, &x)
		default:
			return nil, checkfu.Refuse(CodeRemoteCallFailed, "mcpremote: the remote tool's result holds a content item no tool result may hold")
		}
	}
	return out, nil
}

// failed keeps a refusal the transport made (when the SDK kept it
// reachable) and replaces anything else, whose text may be the remote
// server's, with a refusal of its own.
func failed(err error, msg string) error {
	if _, ok := checkfu.CodeOf(err); ok {
		return err
	}
	if _, ok := egress.UpstreamCodeOf(err); ok {
		return err
	}
	return checkfu.Refuse(CodeRemoteCallFailed, "%s", msg)
}

// Result decodes the body of a response [Call] returned.
func Result(resp *edge.Response) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if resp == nil || resp.Header.Get("Content-Type") != ResultContentType || json.Unmarshal(resp.Body, &res) != nil {
		return nil, checkfu.Refuse(CodeRemoteCallFailed, "mcpremote: the response is not a remote tool's result")
	}
	return &res, nil
}
