package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// remoteCall grants capability and calls it with args over a member's
// channel of a remote rig.
func remoteCall(t *testing.T, r *rigtest.Rig, capability, args string) (*edge.Response, error) {
	t.Helper()
	r.Grant(capability)
	return r.Channel(rigtest.Member()).Call(context.Background(), capability, json.RawMessage(args))
}

// TestRemoteAllowed calls a remote MCP tool through the gateway: the
// registered credential arrives at the remote server, and nothing of it,
// nor of the server's own metadata, comes back.
func TestRemoteAllowed(t *testing.T) {
	r := rigtest.NewRemote(t)
	resp, err := remoteCall(t, r, "remote.search", `{"query":"bugs"}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcpremote.Result(resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "found: bugs" {
		t.Fatalf("content %#v", res.Content[0])
	}
	auth := r.Remote.Auth()
	if len(auth) < 3 {
		t.Fatalf("the remote server saw %d requests, want the handshake and the call", len(auth))
	}
	for i, a := range auth {
		if a != "Bearer "+rigtest.Canary {
			t.Errorf("request %d to the remote server carried Authorization %q, want the registered credential", i, a)
		}
	}
	if strings.Contains(string(resp.Body), r.Remote.Other) || strings.Contains(string(resp.Body), "_meta") {
		t.Errorf("the result passes on the remote server's metadata: %s", resp.Body)
	}
	noLeak(t, "the remote result", resp.Body)
	noLeak(t, "events", eventsJSON(t, r.Evidence.Events()))
	if n := r.Remote.OtherHits.Load(); n != 0 {
		t.Errorf("the server the descriptor names got %d requests, want 0", n)
	}
	decisions, results := gatewayEvents(r)
	if len(decisions) != 1 || len(results) != 1 || decisions[0].Outcome != authz.OutcomeApproved || results[0].Outcome != authz.OutcomeSucceeded {
		t.Fatalf("decisions %+v results %+v", decisions, results)
	}
	if r.Hits.Load() != 0 {
		t.Errorf("the plain provider got %d requests", r.Hits.Load())
	}
}

var _ = errors.Is
var _ = checkfu.Quote
var _ = egress.CodeRedirectRefused
