package edge_test

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

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// A credentialed call against a loopback provider reached as
// api.example.com (treated as public for the example only), made through
// a call pipeline (package custody/pipeline), the only way to the edge.
func Example_pipeline() {
	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"authorized":%t}`, r.Header.Get("Authorization") == "Bearer example-token-123")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, _ := dnstest.Start()
	defer dns.Close()
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})

	base := "https://api.example.com:" + strconv.Itoa(int(port))
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: "repo.read", Operation: "GET", Resource: base + "/v1/repo", Credential: cred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	provider := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{"repo.read"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, _ := leases.Issue(authz.LeaseRequest{Provider: provider, Capabilities: []string{"repo.read"}, Scope: scope, Budget: 10, TTL: time.Minute})

	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	native.Put(context.Background(), cred, custody.NewSecret([]byte("example-token-123")))
	ed, _ := edge.NewEdge(edge.EdgeConfig{
		Leases: leases, Custodian: native,
		Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	})
	defer ed.CloseIdleConnections()

	// A call pipeline runs every check, then hands the call to the edge;
	// the Connection's egress rules decide where it may go.
	call := func(rules []egress.Rule) (*edge.Response, error) {
		allowed, _ := egress.NewRules(rules)
		assignments := &authz.Assignments{}
		assignments.Assign(authz.PermissionAssignment{Actor: "alice", Capability: "repo.read", Tenant: "org-1", Workspace: "ws-1", ExpiresAt: time.Now().Add(time.Hour)})
		p, err := pipeline.New(pipeline.Config{
			Assignments: assignments, Registry: registry, Leases: leases, Edge: ed,
			Connections: []edge.Connection{{Credential: cred, Rules: allowed}},
			Evidence:    &custodytest.MemoryEvidence{}, Label: checkfu.LabelMock, Service: scope.Service, Name: scope.Gateway,
		})
		if err != nil {
			return nil, err
		}
		rc := checkfu.RequestContext{Actor: "alice", Tenant: "org-1", Workspace: "ws-1", Session: "s1", Request: "req-1", Release: "app@1"}
		ch, err := p.Open(rc, lease.ID, []pipeline.Tool{{Capability: "repo.read", Tool: "read_repo", Operation: "GET", Resource: base + "/v1/repo"}})
		if err != nil {
			return nil, err
		}
		defer ch.Close()
		return ch.Call(context.Background(), "repo.read", json.RawMessage(`{}`))
	}
	resp, err := call([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	fmt.Println(resp.Status, string(resp.Body), err)

	_, err = call([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v2", Methods: []string{"GET"}}})
	fmt.Println(checkfu.CodeOf(err))
	// Output:
	// 200 {"authorized":true} <nil>
	// no_rule_matched true
}

func ExampleTokenRuntime() {
	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	// The refresher stands in for a provider's token endpoint: it issues
	// "access-N" tokens valid for an hour. A real deployment uses
	// edge.OAuthRefresher over an egress client.
	refreshes := 0
	refresher := edge.RefresherFunc(func(context.Context, custody.Binding, *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
		refreshes++
		return custody.NewSecret(fmt.Appendf(nil, "access-%d", refreshes)), nil, clock().Add(time.Hour), nil
	})
	rt, _ := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: clock,
	})
	rt.Enroll(context.Background(), cred, custody.NewSecret([]byte("refresh-token")))

	for _, step := range []time.Duration{0, 30 * time.Minute, 30 * time.Minute} {
		now = now.Add(step)
		s, err := rt.Open(context.Background(), cred)
		fmt.Println(s, err, "refreshes:", refreshes) // a Secret prints redacted
		s.Destroy()
	}
	// Output:
	// [redacted] <nil> refreshes: 1
	// [redacted] <nil> refreshes: 1
	// [redacted] <nil> refreshes: 2
}
