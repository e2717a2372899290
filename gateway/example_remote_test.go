package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
	"github.com/checkfu/checkfu/gateway"
)

// searchServer is a remote MCP server with one tool, search; it notes
// whether a request carried the credential.
func searchServer(sawCredential *atomic.Bool) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Query string }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found: " + args.Query}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{DisableLocalhostProtection: true}) // reached by name on loopback
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer example-token-123" {
			sawCredential.Store(true)
		}
		h.ServeHTTP(w, r)
	})
}

// A registration of Protocol authz.MCP names a remote MCP server's tool:
// the gateway runs the same checks, then calls that one tool as the
// server's client, with the credential attached at custody's edge. The
// sandbox gets the tool's result, never the credential. The server here
// is a loopback server reached as mcp.example.com, treated as public for
// the example only.
func ExampleGateway_remote() {
	var sawCredential atomic.Bool
	remote := httptest.NewTLSServer(searchServer(&sawCredential))
	defer remote.Close()
	port := remote.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, _ := dnstest.Start()
	defer dns.Close()
	dns.Set("mcp.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})

	cred := custody.Binding{Namespace: "acme", Integration: "search", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	native.Put(context.Background(), cred, custody.NewSecret([]byte("example-token-123")))
	search := gateway.ProfileTool{Capability: "remote.search", Tool: "search", Operation: "POST", Resource: "https://mcp.example.com:" + strconv.Itoa(int(port)) + "/mcp"}
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: search.Capability, Operation: search.Operation, Resource: search.Resource, Credential: cred, Effect: authz.ReadOnly, Protocol: authz.MCP,
		Tool: authz.ToolDescriptor{Name: search.Tool, InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	provider := checkfu.ProviderRevision{Provider: "acme:search", Revision: "1"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{search.Capability}})
	// The MCP endpoint, with the methods and headers an MCP client sends.
	rules, _ := egress.NewRules([]egress.Rule{{Host: "mcp.example.com", Port: port, PathPrefix: "/mcp", Methods: []string{"DELETE", "POST"}, Headers: edge.RemoteHeaders()}})
	tokens, _ := gateway.NewHMACTokens([]byte("a key of at least thirty-two bytes!"), nil)
	rc := checkfu.RequestContext{Actor: "user:bob", Tenant: "org-1", Workspace: "ws-1", Session: "sess-1", Request: "req-1", Release: "app@1"}
	assignments := &authz.Assignments{}
	assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: search.Capability, Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: time.Now().Add(time.Hour)})
	plane, err := gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: tokens, Registry: registry, Catalog: catalog, Assignments: assignments,
		Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Lease: authz.LeaseRequest{Provider: provider, Capabilities: []string{search.Capability}, Budget: 100, TTL: time.Hour,
			Scope: authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: rc.Actor}},
		Evidence: &custodytest.MemoryEvidence{}, Label: checkfu.LabelMock,
		Edge: func(leases *authz.Leases) (gateway.Edge, error) {
			return edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: native, Dialer: dialer,
				RootCAs: remote.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
		},
	})
	if err != nil {
		panic(err)
	}
	defer plane.Close()

	tok, _ := tokens.Issue(rc, time.Minute)
	ch, err := plane.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: plane.Lease.ID, Tools: []gateway.ProfileTool{search}})
	if err != nil {
		panic(err)
	}
	resp, err := ch.Call(context.Background(), "remote.search", json.RawMessage(`{"query":"bugs"}`))
	fmt.Println(resp.Status, string(resp.Body), err)
	fmt.Println(sawCredential.Load())
	// Output:
	// 200 {"content":[{"type":"text","text":"found: bugs"}]} <nil>
	// true
}
