package edge_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// authorized makes, for the edge's own tests, the value the pipeline
// would hand the edge for inv (resolved against the rig's registry),
// spending nothing.
func (rig *edgeRig) authorized(inv invocation) edge.Authorized {
	rig.t.Helper()
	action, err := rig.registry.Resolve(inv.Call, inv.Connection.Credential)
	if err != nil {
		rig.t.Fatal(err)
	}
	reg, _ := rig.registry.Lookup(action.Capability)
	a, err := edge.MintForTest(inv.Connection, action, reg.Tool.Name, reg.Protocol, rig.lease, inv.Scope)
	if err != nil {
		rig.t.Fatal(err)
	}
	return a
}

var sendContext = checkfu.RequestContext{Actor: "alice", Tenant: "org-1", Workspace: "ws-1", Session: "s1", Request: "req-1", Run: "run-1", Release: "checkfu@test"}

// TestSendAttachesAndSpendsNothing: Send is the credential half of the
// path. It attaches the credential to the allowed request, spends no lease
// budget (the pipeline spent it) and records the request context.
func TestSendAttachesAndSpendsNothing(t *testing.T) {
	rig := newEdgeRig(t)
	before, _ := rig.leases.Remaining(rig.lease.ID)
	ctx := checkfu.WithRequestContext(context.Background(), sendContext)
	resp, err := rig.edge.Send(ctx, rig.authorized(rig.list()))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != `{"ok":true}` {
		t.Fatalf("response %+v", resp)
	}
	rig.mu.Lock()
	auth := rig.lastAuth
	rig.mu.Unlock()
	if auth != "Bearer "+edgeCanary {
		t.Fatalf("provider saw Authorization %q", auth)
	}
	if after, _ := rig.leases.Remaining(rig.lease.ID); after != before {
		t.Errorf("Send spent lease budget: %d -> %d", before, after)
	}
	evs := rig.evidence.Events()
	ev := evs[len(evs)-1]
	if ev.Kind != authz.EvidenceEdgeCall || ev.Request != sendContext || ev.Outcome != authz.OutcomeSucceeded || ev.Tool != "list_issues" {
		t.Errorf("evidence %+v", ev)
	}
	noLeak(t, nil, evs)
}

// TestSendRefuses: each refusal Send keeps for itself happens before the
// provider is contacted and, except the last-moment lease check and the
// egress client's own decision, before the credential is opened. A value
// the pipeline did not make, or one sent already, is refused before
// anything else.
func TestSendRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func(*edgeRig) edge.Authorized
		code  checkfu.Code
		opens int64
	}{
		{"the zero Authorized", func(*edgeRig) edge.Authorized { return edge.Authorized{} }, edge.CodeNotAuthorized, 0},
		{"sent twice", func(rig *edgeRig) edge.Authorized {
			a := rig.authorized(rig.list())
			if _, err := rig.edge.Send(context.Background(), a); err != nil {
				rig.t.Fatal(err)
			}
			rig.hits.Store(0)
			rig.custodian.opens.Store(0)
			return a
		}, edge.CodeNotAuthorized, 0},
		{"outside the rules", func(rig *edgeRig) edge.Authorized {
			return rig.authorized(rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`))
		}, egress.CodeNoRuleMatched, 1},
		{"lease revoked", func(rig *edgeRig) edge.Authorized {
			_ = rig.leases.Revoke(rig.lease.ID)
			return rig.authorized(rig.list())
		}, authz.CodeLeaseRevoked, 1},
		{"lease of another scope", func(rig *edgeRig) edge.Authorized {
			inv := rig.list()
			inv.Scope.Actor = "mallory"
			return rig.authorized(inv)
		}, authz.CodeLeaseOutOfScope, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newEdgeRig(t)
			a := tc.make(rig)
			_, err := rig.edge.Send(context.Background(), a)
			wantCode(t, err, tc.code)
			if n := rig.hits.Load(); n != 0 {
				t.Errorf("the provider was contacted %d times", n)
			}
			if n := rig.custodian.opens.Load(); n != tc.opens {
				t.Errorf("the credential was opened %d times, want %d", n, tc.opens)
			}
		})
	}
	var zero *edge.Edge
	if _, err := zero.Send(context.Background(), edge.Authorized{}); err == nil {
		t.Error("the nil Edge sent")
	}
}
