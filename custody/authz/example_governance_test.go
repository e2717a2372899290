package authz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
)

func ExampleRegistry_Resolve() {
	r := exampleRegistry()
	call := authz.ToolCall{
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
	// arguments_invalid
	// capability_mismatch
}

func ExampleLeases_Use() {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	provider := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{"issues.create"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: exampleRegistry(), Now: func() time.Time { return now }})

	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
	lease, err := leases.Issue(authz.LeaseRequest{Provider: provider, Capabilities: []string{"issues.create"}, Scope: scope, Budget: 1, TTL: 10 * time.Minute})
	if err != nil {
		panic(err)
	}
	use := authz.LeaseUse{Scope: scope, Capability: "issues.create"}
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
	// "lease_budget_exhausted"
	// "lease_out_of_scope"
	// "lease_revoked"
}

func ExampleApprovals_Carry() {
	sink := &custodytest.MemoryEvidence{}
	approvals, _ := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	bound := authz.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: "sha256:…", Effect: authz.ExternalEffect, Scope: "session:s1"}
	a, _ := approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: bound, Approver: "bob", Approve: true, TTL: time.Minute})

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
	// approval_used true
	// approval_decision approved mock
	// approval_result succeeded mock
	// approval_result refused mock
}

func exampleRegistry() *authz.Registry {
	r, err := authz.NewRegistry(authz.Registration{
		Capability: "issues.create",
		Operation:  "POST",
		Resource:   "https://api.github.example/repos/acme/app/issues",
		Credential: exampleCred,
		Effect:     authz.ExternalEffect,
		Tool: authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)},
	})
	if err != nil {
		panic(err)
	}
	return r
}
