package custody_test

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
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/dnstest"
)

var exampleCred = custody.Binding{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

func exampleRegistry() *custody.Registry {
	r, err := custody.NewRegistry(custody.Registration{
		Capability: "issues.create",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: exampleCred,
		Effect:     custody.ExternalEffect,
		Tool: custody.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)},
	})
	if err != nil {
		panic(err)
	}
	return r
}

func ExampleRegistry_Resolve() {
	r := exampleRegistry()
	call := custody.ToolCall{
		Capability: "issues.create",
		Tool:       "create_issue",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Arguments:  json.RawMessage(`{ "title" : "crash on start" }`),
	}
	action, err := r.Resolve(call, exampleCred)
	fmt.Println(string(action.Body), action.Effect, err)

	call.Arguments = json.RawMessage(`{"title": 7}`)
	_, err = r.Resolve(call, exampleCred)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)

	call.Arguments = json.RawMessage(`{"title": "x"}`)
	call.Resource = "https://api.github.example/repos/acme/other/issues"
	_, err = r.Resolve(call, exampleCred)
	code, _ = checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// {"title":"crash on start"} external_effect <nil>
	// custody_arguments_invalid
	// custody_capability_mismatch
}

func ExampleLeases_Use() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	provider := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := custody.NewCatalog(custody.ProviderEntry{Revision: provider, Capabilities: []string{"issues.create"}})
	leases, _ := custody.NewLeases(custody.LeaseConfig{Catalog: catalog, Registry: exampleRegistry(), Now: func() time.Time { return now }})

	scope := custody.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, err := leases.Issue(custody.LeaseRequest{Provider: provider, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1, TTL: 10 * time.Minute})
	if err != nil {
		panic(err)
	}
	use := custody.LeaseUse{Scope: scope, Capability: "issues.create"}
	for _, step := range []func() error{
		func() error { _, err := leases.Use(lease.ID, use); return err },
		func() error { _, err := leases.Use(lease.ID, use); return err },
		func() error {
			other := use
			other.Scope.Actor = "mallory"
			_, err := leases.Use(lease.ID, other)
			return err
		},
		func() error { leases.Revoke(lease.ID); _, err := leases.Use(lease.ID, use); return err },
	} {
		code, _ := checkfu.CodeOf(step())
		fmt.Printf("%q\n", code)
	}
	// Output:
	// ""
	// "custody_lease_budget_exhausted"
	// "custody_lease_out_of_scope"
	// "custody_lease_revoked"
}

func ExampleApprovals_Carry() {
	sink := &custody.MemoryEvidence{}
	approvals, _ := custody.NewApprovals(custody.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	bound := custody.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: "sha256:…", Effect: custody.ExternalEffect, Scope: "session:s1"}
	a, _ := approvals.Decide(context.Background(), custody.ApprovalDecision{Binding: bound, Approver: "bob", Approve: true, TTL: time.Minute})

	err := approvals.Carry(context.Background(), a.ID, bound, func(context.Context) error {
		fmt.Println("effect runs")
		return nil
	})
	fmt.Println(err)
	err = approvals.Carry(context.Background(), a.ID, bound, func(context.Context) error { return nil })
	fmt.Println(checkfu.CodeOf(err))
	for _, ev := range sink.Events() {
		fmt.Println(ev.Kind, ev.Outcome, ev.Label)
	}
	// Output:
	// effect runs
	// <nil>
	// custody_approval_used true
	// approval_decision approved mock
	// approval_result succeeded mock
	// approval_result refused mock
}

// ExampleEdge_Call runs a credentialed call against a loopback provider
// reached as api.example.com (treated as public for the example only).
func ExampleEdge_Call() {
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
	registry, _ := custody.NewRegistry(custody.Registration{
		Capability: "repo.read", Operation: "GET", Resource: base + "/v1/repo", Credential: exampleCred, Effect: custody.ReadOnly,
		Tool: custody.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	provider := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := custody.NewCatalog(custody.ProviderEntry{Revision: provider, Capabilities: []string{"repo.read"}})
	leases, _ := custody.NewLeases(custody.LeaseConfig{Catalog: catalog, Registry: registry})
	scope := custody.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, _ := leases.Issue(custody.LeaseRequest{Provider: provider, Capabilities: []string{"repo.read"}, Scope: scope, Budget: 10, TTL: time.Minute})

	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemStore())
	native.Put(context.Background(), exampleCred, custody.NewSecret([]byte("example-token-123")))
	edge, _ := custody.NewEdge(custody.EdgeConfig{
		Registry: registry, Leases: leases, Custodian: native,
		Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	})
	defer edge.CloseIdleConnections()

	allowed, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	inv := custody.Invocation{
		Connection: custody.Connection{Credential: exampleCred, Rules: allowed},
		Lease:      lease.ID,
		Scope:      scope,
		Call:       custody.ToolCall{Capability: "repo.read", Tool: "read_repo", Operation: "GET", Resource: base + "/v1/repo", Arguments: json.RawMessage(`{}`)},
	}
	resp, err := edge.Call(context.Background(), inv)
	fmt.Println(resp.Status, string(resp.Body), err)

	inv.Connection.Rules, _ = egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v2", Methods: []string{"GET"}}})
	_, err = edge.Call(context.Background(), inv)
	fmt.Println(checkfu.CodeOf(err))
	// Output:
	// 200 {"authorized":true} <nil>
	// no_rule_matched true
}

// countingRefresher stands in for a provider's token endpoint: it issues
// "access-N" tokens valid for an hour. A real deployment uses
// custody.OAuthRefresher over an egress client.
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
	rt, _ := custody.NewTokenRuntime(custody.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemStore(), Refresher: refresher, Now: clock,
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
