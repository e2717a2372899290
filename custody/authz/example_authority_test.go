package authz_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
)

func ExampleNewRegistry() {
	reg := authz.Registration{
		Capability: "repo.read",
		Operation:  "GET",
		Resource:   "https://api.github.example/repos/acme/app",
		Credential: exampleCred,
		Effect:     authz.ReadOnly,
		Tool:       authz.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	r, err := authz.NewRegistry(reg)
	fmt.Println(err)
	got, ok := r.Lookup("repo.read")
	fmt.Println(got.Resource, ok)

	// Registrations are exact https resources: anything else is refused
	// and no registry is built.
	plain := reg
	plain.Resource = "http://api.github.example/repos/acme/app"
	_, err = authz.NewRegistry(plain)
	fmt.Println(errors.Is(err, authz.CodeRegistrationInvalid))

	// So is a registration that does not say what it does to the world.
	unsaid := reg
	unsaid.Effect = 0
	_, err = authz.NewRegistry(unsaid)
	fmt.Println(errors.Is(err, authz.CodeRegistrationInvalid))
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
	catalog, err := authz.NewCatalog(authz.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	fmt.Println(catalog != nil, err)

	// Each exact revision once: a duplicate would make leases ambiguous.
	_, err = authz.NewCatalog(
		authz.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}},
		authz.ProviderEntry{Revision: github3, Capabilities: []string{"repo.read"}},
	)
	fmt.Println(errors.Is(err, authz.CodeLeaseRequestInvalid))
	// Output:
	// true <nil>
	// true
}

// NewLeases resolves every lease against a catalog of exact provider
// revisions and the registry; Issue refuses what either does not qualify.
func ExampleNewLeases() {
	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, err := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	if err != nil {
		panic(err)
	}
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	req := authz.LeaseRequest{Provider: github3, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 5, TTL: 10 * time.Minute}
	lease, err := leases.Issue(req)
	fmt.Println(lease.Budget, lease.Capabilities, err)

	// Another revision of the provider is another provider.
	req.Provider.Revision = "4"
	_, err = leases.Issue(req)
	fmt.Println(errors.Is(err, authz.CodeProviderUnknown))

	// A capability the entry does not qualify is refused.
	req.Provider = github3
	req.Capabilities = []string{"repo.delete"}
	_, err = leases.Issue(req)
	fmt.Println(errors.Is(err, authz.CodeCapabilityUnqualified))
	// Output:
	// 5 [issues.create] <nil>
	// true
	// true
}

// Hold checks a lease is live for a scope without spending it; Revoke
// ends it by id alone.
func ExampleLeases_Hold() {
	github3 := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github3, Capabilities: []string{"issues.create"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: exampleRegistry()})
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, _ := leases.Issue(authz.LeaseRequest{Provider: github3, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1, TTL: time.Minute})

	fmt.Println(leases.Hold(lease.ID, scope))
	left, _ := leases.Remaining(lease.ID)
	fmt.Println("remaining:", left)

	if err := leases.Revoke(lease.ID); err != nil {
		panic(err)
	}
	fmt.Println(errors.Is(leases.Hold(lease.ID, scope), authz.CodeLeaseRevoked))
	// Output:
	// <nil>
	// remaining: 1
	// true
}

// Lease.Check is the pure part of Leases.Use: scope and lifetime at a
// given time.
func ExampleLease_Check() {
	issued := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease := authz.Lease{
		ID: "lease_1", Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1,
		IssuedAt: issued, ExpiresAt: issued.Add(10 * time.Minute),
	}
	use := authz.LeaseUse{Scope: scope, Capability: "issues.create"}
	fmt.Println(lease.Check(use, issued.Add(time.Minute)))
	fmt.Println(checkfu.CodeOf(lease.Check(use, issued.Add(10*time.Minute))))
	use.Capability = "repo.read"
	fmt.Println(checkfu.CodeOf(lease.Check(use, issued.Add(time.Minute))))
	// The zero Lease permits nothing.
	fmt.Println(authz.Lease{}.Check(use, issued) != nil)
	// Output:
	// <nil>
	// lease_expired true
	// lease_out_of_scope true
	// true
}

func ExampleNewApprovals() {
	// An unrecorded decision is no decision: the sink is required.
	_, err := authz.NewApprovals(authz.ApprovalConfig{})
	fmt.Println(err != nil)

	sink := &custodytest.MemoryEvidence{}
	approvals, err := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	fmt.Println(approvals != nil, err)
	// Output:
	// true
	// true <nil>
}

// Decide records an approver's answer on one exact action, bound by its
// digest; an actor may not approve its own action.
func ExampleApprovals_Decide() {
	sink := &custodytest.MemoryEvidence{}
	approvals, _ := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	action, err := exampleRegistry().Resolve(authz.ToolCall{
		Capability: "issues.create", Tool: "create_issue", Operation: "POST",
		Resource:  "https://api.github.example/repos/acme/app/issues",
		Arguments: json.RawMessage(`{"title":"crash on start"}`),
	}, exampleCred)
	if err != nil {
		panic(err)
	}
	bound := authz.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: action.Digest(), Effect: action.Effect, Scope: "session:s1"}

	_, err = approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: bound, Approver: "alice", Approve: true, TTL: time.Minute})
	fmt.Println(errors.Is(err, authz.CodeApprovalInvalid))

	a, err := approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: bound, Approver: "bob", Approve: true, TTL: time.Minute})
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
	bound := authz.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: "sha256:00", Effect: authz.ExternalEffect, Scope: "session:s1"}
	a := authz.Approval{ID: "appr_1", Binding: bound, Approver: "bob", Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}

	fmt.Println(a.Check(bound, decided.Add(time.Second)))
	other := bound
	other.Scope = "session:s2"
	fmt.Println(checkfu.CodeOf(a.Check(other, decided.Add(time.Second))))
	fmt.Println(checkfu.CodeOf(a.Check(bound, decided.Add(time.Hour))))
	// Output:
	// <nil>
	// approval_mismatch true
	// approval_expired true
}

// Two calls that differ in any field have different digests, so an
// approval of one never covers the other.
func ExampleAction_Digest() {
	a := authz.Action{Capability: "issues.create", Operation: "POST", Resource: "https://api.github.example/repos/acme/app/issues", Effect: authz.ExternalEffect, Body: []byte(`{"title":"a"}`)}
	b := a
	b.Body = []byte(`{"title":"b"}`)
	fmt.Println(len(a.Digest()) == len("sha256:")+64, a.Digest() == b.Digest())
	// Output: true false
}

func ExampleEffect_UnmarshalText() {
	var e authz.Effect
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
