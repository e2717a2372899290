package broker_test

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
	"github.com/checkfu/checkfu/gateway/broker"
)

// openChannel builds a plane in front of provider (a loopback server
// reached as api.example.com, treated as public for the example only)
// with one tool, list_issues, granted to user:bob, and opens his
// channel, as package gateway's ExampleGateway does; close stops it all.
func openChannel(provider *httptest.Server) (ch *gateway.Channel, close func()) {
	port := provider.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, _ := dnstest.Start()
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})

	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	native.Put(context.Background(), cred, custody.NewSecret([]byte("example-token-123")))
	list := gateway.ProfileTool{Capability: "issues.list", Tool: "list_issues", Operation: "GET", Resource: "https://api.example.com:" + strconv.Itoa(int(port)) + "/v1/repos/acme/app/issues"}
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: list.Capability, Operation: list.Operation, Resource: list.Resource, Credential: cred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: list.Tool, Description: "List the issues of acme/app.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`)},
	})
	github := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github, Capabilities: []string{list.Capability}})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	tokens, _ := gateway.NewHMACTokens([]byte("a key of at least thirty-two bytes!"), nil)
	rc := checkfu.RequestContext{Actor: "user:bob", Tenant: "org-1", Workspace: "ws-1", Session: "sess-1", Request: "req-1", Release: "app@1"}
	assignments := &authz.Assignments{}
	assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: list.Capability, Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: time.Now().Add(time.Hour)})
	plane, err := gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: tokens, Registry: registry, Catalog: catalog, Assignments: assignments,
		Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Lease: authz.LeaseRequest{Provider: github, Capabilities: []string{list.Capability}, Budget: 100, TTL: time.Hour,
			Scope: authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: rc.Actor}},
		Evidence: &custodytest.MemoryEvidence{}, Label: checkfu.LabelMock,
		Edge: func(leases *authz.Leases) (gateway.Edge, error) {
			return edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: native, Dialer: dialer,
				RootCAs: provider.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
		},
	})
	if err != nil {
		panic(err)
	}
	tok, _ := tokens.Issue(rc, time.Minute)
	ch, err = plane.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: plane.Lease.ID, Tools: []gateway.ProfileTool{list}})
	if err != nil {
		panic(err)
	}
	return ch, func() { plane.Close(); dns.Close() }
}

// The Runner builds a broker for a channel and serves it to the sandbox;
// sandbox code sees the profile's tools and nothing else.
func ExampleNew() {
	provider := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"issues":[{"n":1}]}`)
	}))
	defer provider.Close()
	ch, closePlane := openChannel(provider)
	defer closePlane()

	b, err := broker.New(ch)
	if err != nil {
		panic(err)
	}
	plane, sandbox := net.Pipe()
	go b.ServeConn(context.Background(), plane)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: sandbox, Writer: sandbox}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	tools, _ := cs.ListTools(context.Background(), nil)
	for _, t := range tools.Tools {
		fmt.Println(t.Name, "-", t.Description)
	}
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// list_issues - List the issues of acme/app.
	// false {"issues":[{"n":1}]}
}
