package custody_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
)

func ExampleNewRegistry() {
	reg := custody.Registration{
		Capability: "repo.read",
		Operation:  "GET",
		Resource:   "https://api.github.example/repos/acme/app",
		Credential: exampleCred,
		Effect:     custody.ReadOnly,
		Tool:       custody.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	r, err := custody.NewRegistry(reg)
	fmt.Println(err)
	got, ok := r.Lookup("repo.read")
	fmt.Println(got.Resource, ok)

	// Registrations are exact https resources: anything else is refused
	// and no registry is built.
	plain := reg
	plain.Resource = "http://api.github.example/repos/acme/app"
	_, err = custody.NewRegistry(plain)
	fmt.Println(errors.Is(err, custody.CodeRegistrationInvalid))

	// So is a registration that does not say what it does to the world.
	unsaid := reg
	unsaid.Effect = 0
	_, err = custody.NewRegistry(unsaid)
	fmt.Println(errors.Is(err, custody.CodeRegistrationInvalid))
	// Output:
	// <nil>
	// https://api.github.example/repos/acme/app true
	// true
	// true
}

func ExampleRegistry_Lookup() {
	r := exampleRegistry()
	reg, ok := r.Lookup("issues.create")
	fmt.Println(reg.Operation, reg.Effect, ok)
	_, ok = r.Lookup("issues.delete")
	fmt.Println(ok)
	// Output:
	// POST external_effect true
	// false
}

func ExampleNewCatalog() {
	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, err := custody.NewCatalog(custody.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	fmt.Println(catalog != nil, err)

	// Each exact revision once: a duplicate would make leases ambiguous.
	_, err = custody.NewCatalog(
		custody.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}},
		custody.ProviderEntry{Revision: github3, Capabilities: []string{"repo.read"}},
	)
	fmt.Println(errors.Is(err, custody.CodeLeaseRequestInvalid))
	// Output:
	// true <nil>
	// true
}

// NewLeases resolves every lease against a catalog of exact provider
// revisions and the registry; Issue refuses what either does not qualify.
func ExampleNewLeases() {
	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := custody.NewCatalog(custody.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, err := custody.NewLeases(custody.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	if err != nil {
		panic(err)
	}
	scope := custody.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	req := custody.LeaseRequest{Provider: github3, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 5, TTL: 10 * time.Minute}
	lease, err := leases.Issue(req)
	fmt.Println(lease.Budget, lease.Capabilities, err)

	// Another revision of the provider is another provider.
	req.Provider.Revision = "4"
	_, err = leases.Issue(req)
	fmt.Println(errors.Is(err, custody.CodeProviderUnknown))

	// A capability the entry does not qualify is refused.
	req.Provider = github3
	req.Capabilities = []string{"repo.delete"}
	_, err = leases.Issue(req)
	fmt.Println(errors.Is(err, custody.CodeCapabilityUnqualified))
	// Output:
	// 5 [issues.create] <nil>
	// true
	// true
}

// Hold checks a lease is live for a scope without spending it; Revoke
// ends it by id alone.
func ExampleLeases_Hold() {
	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := custody.NewCatalog(custody.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, _ := custody.NewLeases(custody.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	scope := custody.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, _ := leases.Issue(custody.LeaseRequest{Provider: github3, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1, TTL: time.Minute})

	fmt.Println(leases.Hold(lease.ID, scope))
	left, _ := leases.Remaining(lease.ID)
	fmt.Println("remaining:", left)

	if err := leases.Revoke(lease.ID); err != nil {
		panic(err)
	}
	fmt.Println(errors.Is(leases.Hold(lease.ID, scope), custody.CodeLeaseRevoked))
	// Output:
	// <nil>
	// remaining: 1
	// true
}

// Lease.Check is the pure part of Leases.Use: scope and lifetime at a
// given time.
func ExampleLease_Check() {
	issued := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	scope := custody.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease := custody.Lease{
		ID: "lease_1", Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1,
		IssuedAt: issued, ExpiresAt: issued.Add(10 * time.Minute),
	}
	use := custody.LeaseUse{Scope: scope, Capability: "issues.create"}
	fmt.Println(lease.Check(use, issued.Add(time.Minute)))
	fmt.Println(checkfu.CodeOf(lease.Check(use, issued.Add(10*time.Minute))))
	use.Capability = "repo.read"
	fmt.Println(checkfu.CodeOf(lease.Check(use, issued.Add(time.Minute))))
	// The zero Lease permits nothing.
	fmt.Println(custody.Lease{}.Check(use, issued) != nil)
	// Output:
	// <nil>
	// custody_lease_expired true
	// custody_lease_out_of_scope true
	// true
}

func ExampleNewApprovals() {
	// An unrecorded decision is no decision: the sink is required.
	_, err := custody.NewApprovals(custody.ApprovalConfig{})
	fmt.Println(err != nil)

	sink := &custody.MemoryEvidence{}
	approvals, err := custody.NewApprovals(custody.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	fmt.Println(approvals != nil, err)
	// Output:
	// true
	// true <nil>
}

// Decide records an approver's answer on one exact action, bound by its
// digest; an actor may not approve its own action.
func ExampleApprovals_Decide() {
	sink := &custody.MemoryEvidence{}
	approvals, _ := custody.NewApprovals(custody.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	action, err := exampleRegistry().Resolve(custody.ToolCall{
		Capability: "issues.create", Tool: "create_issue", Operation: "POST",
		Resource:  "https://api.github.example/repos/acme/app/issues",
		Arguments: json.RawMessage(`{"title":"crash on start"}`),
	}, exampleCred)
	if err != nil {
		panic(err)
	}
	bound := custody.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: action.Digest(), Effect: action.Effect, Scope: "session:s1"}

	_, err = approvals.Decide(context.Background(), custody.ApprovalDecision{Binding: bound, Approver: "alice", Approve: true, TTL: time.Minute})
	fmt.Println(errors.Is(err, custody.CodeApprovalInvalid))

	a, err := approvals.Decide(context.Background(), custody.ApprovalDecision{Binding: bound, Approver: "bob", Approve: true, TTL: time.Minute})
	fmt.Println(a.Approved, a.Approver, err)
	for _, ev := range sink.Events() {
		fmt.Println(ev.Kind, ev.Outcome, ev.Action == action.Digest())
	}
	// Output:
	// true
	// true bob <nil>
	// approval_decision approved true
}

// Approval.Check is the pure part of Approvals.Carry: every bound field
// must match at a time inside the approval's life.
func ExampleApproval_Check() {
	decided := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	bound := custody.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: "sha256:00", Effect: custody.ExternalEffect, Scope: "session:s1"}
	a := custody.Approval{ID: "appr_1", Binding: bound, Approver: "bob", Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}

	fmt.Println(a.Check(bound, decided.Add(time.Second)))
	other := bound
	other.Scope = "session:s2"
	fmt.Println(checkfu.CodeOf(a.Check(other, decided.Add(time.Second))))
	fmt.Println(checkfu.CodeOf(a.Check(bound, decided.Add(time.Hour))))
	// Output:
	// <nil>
	// custody_approval_mismatch true
	// custody_approval_expired true
}

// Two calls that differ in any field have different digests, so an
// approval of one never covers the other.
func ExampleAction_Digest() {
	a := custody.Action{Capability: "issues.create", Operation: "POST", Resource: "https://api.github.example/repos/acme/app/issues", Effect: custody.ExternalEffect, Body: []byte(`{"title":"a"}`)}
	b := a
	b.Body = []byte(`{"title":"b"}`)
	fmt.Println(len(a.Digest()) == len("sha256:")+64, a.Digest() == b.Digest())
	// Output: true false
}

func ExampleEffect_UnmarshalText() {
	var e custody.Effect
	fmt.Println(e.Valid(), e) // the zero Effect says nothing: invalid
	err := e.UnmarshalText([]byte("read_only"))
	fmt.Println(e, e.Valid(), err)
	err = json.Unmarshal([]byte(`"write"`), &e)
	fmt.Println(err != nil)
	// Output:
	// false effect(0)
	// read_only true <nil>
	// true
}

// NewEdge needs a registry, a lease book and a custodian; the zero Edge
// refuses every call.
func ExampleNewEdge() {
	_, err := custody.NewEdge(custody.EdgeConfig{Registry: exampleRegistry()})
	fmt.Println(errors.Is(err, custody.CodeInvalidConfig))

	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := custody.NewCatalog(custody.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, _ := custody.NewLeases(custody.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	edge, err := custody.NewEdge(custody.EdgeConfig{
		Registry:  exampleRegistry(),
		Leases:    leases,
		Custodian: custody.NewNative(custody.GenerateKeyset(), custody.NewMemStore()),
		// No Approvals: external_effect calls are refused.
	})
	if err != nil {
		panic(err)
	}
	defer edge.CloseIdleConnections()

	// An unregistered capability is refused before any provider contact.
	_, err = edge.Call(context.Background(), custody.Invocation{
		Connection: custody.Connection{Credential: exampleCred},
		Call:       custody.ToolCall{Capability: "repo.delete", Tool: "delete_repo", Operation: "DELETE", Resource: "https://api.github.example/repos/acme/app", Arguments: json.RawMessage(`{}`)},
	})
	fmt.Println(errors.Is(err, custody.CodeCapabilityUnknown))
	// Output:
	// true
	// true
}

func ExampleNewTokenRuntime() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rt, err := custody.NewTokenRuntime(custody.TokenRuntimeConfig{
		Keys:      custody.GenerateKeyset(),
		Store:     custody.NewMemStore(),
		Refresher: &countingRefresher{now: clock}, // custody.OAuthRefresher in production
		Now:       clock,
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = rt.Open(ctx, exampleCred)
	fmt.Println(errors.Is(err, custody.CodeNotFound)) // not enrolled yet

	if err := rt.Enroll(ctx, exampleCred, custody.NewSecret([]byte("refresh-token"))); err != nil {
		panic(err)
	}
	s, err := rt.Open(ctx, exampleCred)
	fmt.Println(s, err)
	s.Destroy()
	// Output:
	// true
	// [redacted] <nil>
}

// Invalidate is what the edge calls when the provider answers 401: the
// next Open refreshes first, even though the token has not expired.
func ExampleTokenRuntime_Invalidate() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	refresher := &countingRefresher{now: clock}
	rt, _ := custody.NewTokenRuntime(custody.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemStore(), Refresher: refresher, Now: clock,
	})
	ctx := context.Background()
	_ = rt.Enroll(ctx, exampleCred, custody.NewSecret([]byte("refresh-token")))
	s, _ := rt.Open(ctx, exampleCred)
	s.Destroy()

	fmt.Println(rt.Invalidate(ctx, exampleCred))
	s, _ = rt.Open(ctx, exampleCred)
	s.Destroy()
	fmt.Println("refreshes:", refresher.n)

	_ = rt.Remove(ctx, exampleCred)
	fmt.Println(errors.Is(rt.Invalidate(ctx, exampleCred), custody.CodeNotFound))
	// Output:
	// <nil>
	// refreshes: 2
	// true
}
