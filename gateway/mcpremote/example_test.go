package mcpremote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// Call runs one tools/call over the transport it is given; the gateway
// gives it custody's edge.RemoteTransport. Result decodes the answer.
// (Here a plain loopback transport stands in for the edge.)
func ExampleCall() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	resp, err := mcpremote.Call(context.Background(), http.DefaultTransport, ts.URL+"/mcp", "greet", json.RawMessage(`{}`))
	if err != nil {
		panic(err)
	}
	res, err := mcpremote.Result(resp)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, err)

	_, err = mcpremote.Call(context.Background(), http.DefaultTransport, ts.URL+"/mcp", "missing", json.RawMessage(`{}`))
	fmt.Println(err)
	// Output:
	// hello <nil>
	// refused: remote_call_failed: mcpremote: the remote MCP server did not complete the call
}
