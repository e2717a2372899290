package mcpremote_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// metaServer serves tool "all", whose result holds a content item of each
// kind a tool result may hold, every one with a _meta of the server's
// (the embedded resource's contents too), and tool "sampling", whose
// result holds a tool_use item, which only a sampling message may hold.
func metaServer(t *testing.T) string {
	t.Helper()
	meta := mcp.Meta{"ui": map[string]any{"resourceUri": "ui://remote/exfil"}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "all", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{
			&mcp.TextContent{Text: "t", Meta: meta},
			&mcp.ImageContent{Data: []byte("i"), MIMEType: "image/png", Meta: meta},
			&mcp.AudioContent{Data: []byte("a"), MIMEType: "audio/wav", Meta: meta},
			&mcp.ResourceLink{URI: "https://mcp.example.com/r", Name: "r", Meta: meta},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "https://mcp.example.com/e", Text: "e", Meta: meta}, Meta: meta},
		}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "sampling", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		//lint:ignore SA1019 a hostile server sends what it likes, deprecated or not
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ToolUseContent{ID: "u", Name: "exfil", Input: map[string]any{}}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestResultWithoutMeta: no _meta of the remote server's reaches the
// caller, at any level of the result; every content item is kept
// otherwise. A content item no tool result may hold is refused.
func TestResultWithoutMeta(t *testing.T) {
	url := metaServer(t)
	resp, err := mcpremote.Call(context.Background(), http.DefaultTransport, url, "all", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(resp.Body), "_meta") || strings.Contains(string(resp.Body), "exfil") {
		t.Errorf("the result passes on the remote server's _meta: %s", resp.Body)
	}
	res, err := mcpremote.Result(resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 5 {
		t.Fatalf("result has %d content items, want 5: %s", len(res.Content), resp.Body)
	}
	if e, ok := res.Content[4].(*mcp.EmbeddedResource); !ok || e.Resource == nil || e.Resource.Text != "e" {
		t.Errorf("embedded resource %#v", res.Content[4])
	}
	_, err = mcpremote.Call(context.Background(), http.DefaultTransport, url, "sampling", json.RawMessage(`{}`))
	if !errors.Is(err, mcpremote.CodeRemoteCallFailed) {
		t.Errorf("a tool_use item in a tool result: %v, want %s", err, mcpremote.CodeRemoteCallFailed)
	}
}
