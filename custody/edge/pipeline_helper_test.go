package edge_test

import (
	"context"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
)

// An invocation is one credentialed tool call as these tests make it:
// the Connection, the lease and its scope, the call, and the session an
// approval binds. It goes to the edge only through a call pipeline
// (callVia), which is the only maker of edge.Authorized.
type invocation struct {
	Connection    edge.Connection
	Lease         string
	Scope         authz.LeaseScope
	Call          authz.ToolCall
	ApprovalScope string
}

// via returns the caller that runs invocations through a call pipeline
// over e, with the rig's registry, lease book and approvals.
func (rig *edgeRig) via(e *edge.Edge) caller {
	return caller{e: e, registry: rig.registry, leases: rig.leases, approvals: rig.approvals, now: rig.clock.Now}
}

// call runs inv through a call pipeline over the rig's edge.
func (rig *edgeRig) call(ctx context.Context, inv invocation) (*edge.Response, error) {
	return rig.via(rig.edge).Call(ctx, inv)
}

type caller struct {
	e         *edge.Edge
	registry  *authz.Registry
	leases    *authz.Leases
	approvals *authz.Approvals
	now       func() time.Time
	evidence  authz.EvidenceSink // the pipeline's own events; nil discards them
}

// Call runs inv through a pipeline built for it (see open), on a channel
// opened for this one call.
func (c caller) Call(ctx context.Context, inv invocation) (*edge.Response, error) {
	ch, err := c.open(ctx, inv)
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	return ch.Call(ctx, inv.Call.Capability, inv.Call.Arguments)
}

// open builds a pipeline for inv and opens its channel: the profile lists
// the invocation's tool as it names it, an assignment grants the scope's
// actor the capability, and the channel's request context is ctx's (or a
// member's) with the scope's actor and the approval's session. A session
// calls on one channel many times; the caller closes it.
func (c caller) open(ctx context.Context, inv invocation) (*pipeline.Channel, error) {
	rc, ok := checkfu.RequestContextFrom(ctx)
	if !ok {
		rc = checkfu.RequestContext{Tenant: "org-1", Workspace: "ws-1", Request: "req-1", Release: "checkfu@test"}
	}
	rc.Actor = inv.Scope.Actor
	if inv.ApprovalScope != "" {
		rc.Session = inv.ApprovalScope
	} else if rc.Session == "" {
		rc.Session = "s1"
	}
	assignments := &authz.Assignments{}
	if _, err := assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: inv.Call.Capability, Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: c.now().Add(time.Hour)}); err != nil {
		return nil, err
	}
	var conns []edge.Connection
	if inv.Connection.Rules != nil {
		conns = append(conns, inv.Connection)
	}
	sink := c.evidence
	if sink == nil {
		sink = &custodytest.MemoryEvidence{}
	}
	p, err := pipeline.New(pipeline.Config{
		Assignments: assignments, Registry: c.registry, Connections: conns, Leases: c.leases, Approvals: c.approvals,
		Edge: c.e, Evidence: sink, Label: checkfu.LabelMock, Service: inv.Scope.Service, Name: inv.Scope.Gateway, Now: c.now,
	})
	if err != nil {
		return nil, err
	}
	k := inv.Call
	return p.Open(rc, inv.Lease, []pipeline.Tool{{Capability: k.Capability, Tool: k.Tool, Operation: k.Operation, Resource: k.Resource}})
}
