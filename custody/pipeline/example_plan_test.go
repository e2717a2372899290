package pipeline_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
)

// Plan is the dry run: what the call would be, recording and spending
// nothing; the edge is never reached.
func ExampleChannel_Plan() {
	cred := address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	create := pipeline.Tool{Capability: "issues.create", Tool: "create_issue", Operation: "POST", Resource: "https://api.example.com/v1/issues"}
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: create.Capability, Operation: create.Operation, Resource: create.Resource, Credential: cred, Effect: authz.ExternalEffect,
		Tool: authz.ToolDescriptor{Name: create.Tool, InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)},
	})
	github := checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: github, Capabilities: []string{create.Capability}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "user:bob"}
	lease, _ := leases.Issue(authz.LeaseRequest{Provider: github, Capabilities: []string{create.Capability}, Scope: scope, Budget: 10, TTL: time.Hour})
	assignments := &authz.Assignments{}
	assignments.Assign(authz.PermissionAssignment{Actor: "user:bob", Capability: create.Capability, Tenant: "org-1", Workspace: "ws-1", ExpiresAt: time.Now().Add(time.Hour)})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	ed, _ := edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())})
	p, err := pipeline.New(pipeline.Config{
		Assignments: assignments, Registry: registry, Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Leases: leases, Edge: ed, Evidence: &custodytest.MemoryEvidence{}, Label: checkfu.LabelMock,
		Service: scope.Service, Name: scope.Gateway,
	})
	if err != nil {
		panic(err)
	}
	rc := checkfu.RequestContext{Actor: "user:bob", Tenant: "org-1", Workspace: "ws-1", Session: "sess-1", Request: "req-1", Release: "app@1"}
	ch, err := p.Open(rc, lease.ID, []pipeline.Tool{create})
	if err != nil {
		panic(err)
	}
	defer ch.Close()

	plan, err := ch.Plan("issues.create", json.RawMessage(`{ "title": "bug" }`))
	left, _ := leases.Remaining(lease.ID)
	fmt.Println(string(plan.Arguments), plan.Effect, plan.Binding.Action == plan.Action, err, left)
	// Output:
	// {"title":"bug"} external_effect true <nil> 10
}
