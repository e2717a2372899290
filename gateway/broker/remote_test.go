package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestBrokerRemoteTool: sandbox code calls a remote MCP tool through the
// broker, over its Unix socket, with the Go SDK's client. It sees the
// registration's descriptor, not the remote server's (which names another
// host), gets the remote tool's content, and no byte of the credential;
// the echoing tool's answer is withheld; the other host is never
// contacted.
func TestBrokerRemoteTool(t *testing.T) {
	r := rigtest.NewRemote(t)
	r.Grant("remote.search")
	r.Grant("remote.leak")
	var tools []gateway.ProfileTool
	for _, pt := range r.Tools {
		if pt.Capability == "remote.search" || pt.Capability == "remote.leak" {
			tools = append(tools, pt)
		}
	}
	r.Tools = tools
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	cs, tp := serve(t, b)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "search" && (tool.Description != "A remote MCP tool." || tool.Meta != nil || tool.Annotations != nil) {
			t.Errorf("tools/list shows the remote server's descriptor: %+v", tool)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "bugs"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "found: bugs" {
		t.Fatalf("search: %+v %+v", res, res.Content[0])
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "leak", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "refused: credential_echoed" {
		t.Fatalf("leak: %+v", res.Content[0])
	}
	if auth := r.Remote.Auth(); len(auth) == 0 || auth[0] != "Bearer "+rigtest.Canary {
		t.Errorf("the remote server saw Authorization %q, want the registered credential", auth)
	}
	got := tp.bytes()
	noLeak(t, "the broker's bytes", got)
	if strings.Contains(string(got), r.Remote.Other) {
		t.Errorf("the broker passed on the other host's URL")
	}
	if n := r.Remote.OtherHits.Load(); n != 0 {
		t.Errorf("the host the remote descriptor names got %d requests", n)
	}
}
