package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
)

// stubEdge stands in for custody's outbound edge (an *edge.Edge in a
// deployment): it answers every authorized call with 200 and sends
// nothing.
type stubEdge struct{}

func (stubEdge) Send(context.Context, edge.Authorized) (*edge.Response, error) {
	return &edge.Response{Status: 200, Body: []byte(`{"ok":true}`)}, nil
}

func (stubEdge) Remote(context.Context, edge.Authorized) (*edge.RemoteTransport, error) {
	return nil, errors.New("stubEdge: no remote tools")
}

func (stubEdge) Stream(context.Context, edge.Authorized, func(*edge.Stream) error) error {
	return errors.New("stubEdge: no model routes")
}

// A call runs every step in order; an external effect without an approval
// is refused and spends nothing; the dry run gives the binding an
// approval must carry, and then the call runs.
func ExampleChannel_Call() {
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
	evidence := &custodytest.MemoryEvidence{}
	approvals, _ := authz.NewApprovals(authz.ApprovalConfig{Evidence: evidence, Label: checkfu.LabelMock})
	assignments := &authz.Assignments{}
	assignments.Assign(authz.PermissionAssignment{Actor: "user:bob", Capability: create.Capability, Tenant: "org-1", Workspace: "ws-1", ExpiresAt: time.Now().Add(time.Hour)})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	p, err := pipeline.New(pipeline.Config{
		Assignments: assignments, Registry: registry, Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Leases: leases, Approvals: approvals, Edge: stubEdge{}, Evidence: evidence, Label: checkfu.LabelMock,
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

	args := json.RawMessage(`{"title":"bug"}`)
	_, err = ch.Call(context.Background(), "issues.create", args)
	left, _ := leases.Remaining(lease.ID)
	fmt.Println(errors.Is(err, authz.CodeApprovalRequired), left)

	plan, _ := ch.Plan("issues.create", args)
	_, _ = approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: plan.Binding, Approver: "user:carol", Approve: true, TTL: time.Minute})
	resp, err := ch.Call(context.Background(), "issues.create", args)
	left, _ = leases.Remaining(lease.ID)
	fmt.Println(resp.Status, err, left)
	// Output:
	// true 10
	// 200 <nil> 9
}
