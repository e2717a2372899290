package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"time"

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

// The Runner opens a channel with the server-owned token; each call over
// it runs the gateway's checks in order. Without a permission assignment
// the call is refused and names nothing. The provider here is a loopback
// server reached as api.example.com, treated as public for the example
// only.
func ExampleGateway() {
	provider := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"issues":[{"n":1}]}`)
	}))
	defer provider.Close()
	port := provider.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	base := "https://api.example.com:" + strconv.Itoa(int(port))
	dns, _ := dnstest.Start()
	defer dns.Close()
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})

	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	native.Put(context.Background(), cred, custody.NewSecret([]byte("example-token-123")))
	list := gateway.ProfileTool{Capability: "issues.list", Tool: "list_issues", Operation: "GET", Resource: base + "/v1/repos/acme/app/issues"}
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: list.Capability, Operation: list.Operation, Resource: list.Resource, Credential: cred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: list.Tool, InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	github := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github, Capabilities: []string{list.Capability}})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	tokens, _ := gateway.NewHMACTokens([]byte("a key of at least thirty-two bytes!"), nil)
	assignments := &authz.Assignments{}
	plane, err := gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: tokens, Registry: registry, Catalog: catalog, Assignments: assignments,
		Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Lease: authz.LeaseRequest{Provider: github, Capabilities: []string{list.Capability}, Budget: 100, TTL: time.Hour,
			Scope: authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "user:bob"}},
		Evidence: &custodytest.MemoryEvidence{}, Label: checkfu.LabelMock,
		Edge: func(leases *authz.Leases) (gateway.Edge, error) {
			return edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: native, Dialer: dialer,
				RootCAs: provider.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
		},
	})
	if err != nil {
		panic(err)
	}
	defer plane.Close()

	rc := checkfu.RequestContext{Actor: "user:bob", Tenant: "org-1", Workspace: "ws-1", Session: "sess-1", Request: "req-1", Release: "app@1"}
	tok, _ := tokens.Issue(rc, time.Minute)
	ch, err := plane.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: plane.Lease.ID, Tools: []gateway.ProfileTool{list}})
	if err != nil {
		panic(err)
	}
	_, err = ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
	fmt.Println(errors.Is(err, authz.CodePermissionMissing), err)

	assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: list.Capability, Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: time.Now().Add(time.Hour)})
	resp, err := ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
	fmt.Println(resp.Status, string(resp.Body), err)
	// Output:
	// true refused: permission_missing: authz: no permission assignment allows this call
	// 200 {"issues":[{"n":1}]} <nil>
}
