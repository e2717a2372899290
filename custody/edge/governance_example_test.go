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
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

var exampleCred = custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

// A credentialed call against a loopback provider reached as
// api.example.com (treated as public for the example only), made through
// a call pipeline (package custody/pipeline), the only way to the edge.
func Example_pipeline() {
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
		Capability: "repo.read", Operation: "GET", Resource: base + "/v1/repo", Credential: exampleCred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	provider := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{"repo.read"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, _ := leases.Issue(authz.LeaseRequest{Provider: provider, Capabilities: []string{"repo.read"}, Scope: scope, Budget: 10, TTL: time.Minute})

	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	native.Put(context.Background(), exampleCred, custody.NewSecret([]byte("example-token-123")))
	ed, _ := edge.NewEdge(edge.EdgeConfig{
		Leases: leases, Custodian: native,
		Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	})
	defer ed.CloseIdleConnections()

	allowed, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	inv := invocation{
		Connection: edge.Connection{Credential: exampleCred, Rules: allowed},
		Lease:      lease.ID,
		Scope:      scope,
		Call:       authz.ToolCall{Capability: "repo.read", Tool: "read_repo", Operation: "GET", Resource: base + "/v1/repo", Arguments: json.RawMessage(`{}`)},
	}
	via := caller{e: ed, registry: registry, leases: leases, now: time.Now}
	resp, err := via.Call(context.Background(), inv)
	fmt.Println(resp.Status, string(resp.Body), err)

	inv.Connection.Rules, _ = egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v2", Methods: []string{"GET"}}})
	_, err = via.Call(context.Background(), inv)
	fmt.Println(checkfu.CodeOf(err))
	// Output:
	// 200 {"authorized":true} <nil>
	// no_rule_matched true
}

// countingRefresher stands in for a provider's token endpoint: it issues
// "access-N" tokens valid for an hour. A real deployment uses
// edge.OAuthRefresher over an egress client.
type countingRefresher struct {
	n   int
	now func() time.Time
}

func (c *countingRefresher) Refresh(context.Context, custody.Binding, *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
	c.n++
	return custody.NewSecret(fmt.Appendf(nil, "access-%d", c.n)), nil, c.now().Add(time.Hour), nil
}

func ExampleTokenRuntime() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	refresher := &countingRefresher{now: clock}
	rt, _ := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: clock,
	})
	rt.Enroll(context.Background(), exampleCred, custody.NewSecret([]byte("refresh-token")))

	for _, step := range []time.Duration{0, 30 * time.Minute, 30 * time.Minute} {
		now = now.Add(step)
		s, err := rt.Open(context.Background(), exampleCred)
		fmt.Println(s, err, "refreshes:", refresher.n) // a Secret prints redacted
		s.Destroy()
	}
	// Output:
	// [redacted] <nil> refreshes: 1
	// [redacted] <nil> refreshes: 1
	// [redacted] <nil> refreshes: 2
}
