package edge_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

func (rig *edgeRig) outbound(inv edge.Invocation) edge.Outbound {
	rig.t.Helper()
	action, err := rig.registry.Resolve(inv.Call, inv.Connection.Credential)
	if err != nil {
		rig.t.Fatal(err)
	}
	return edge.Outbound{Connection: inv.Connection, Action: action, Lease: inv.Lease, Scope: inv.Scope}
}

var sendContext = checkfu.RequestContext{Actor: "alice", Tenant: "org-1", Workspace: "ws-1", Session: "s1", Request: "req-1", Run: "run-1", Release: "checkfu@test"}

// TestSendAttachesAndSpendsNothing: Send is the credential half of the
// path. It attaches the credential to the allowed request, spends no lease
// budget (the gateway spent it) and records the request context.
func TestSendAttachesAndSpendsNothing(t *testing.T) {
	rig := newEdgeRig(t)
	before, _ := rig.leases.Remaining(rig.lease.ID)
	ctx := checkfu.WithRequestContext(context.Background(), sendContext)
	resp, err := rig.edge.Send(ctx, rig.outbound(rig.list()))
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
// provider is contacted and, except the last-moment lease check, before
// the credential is opened.
func TestSendRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*edgeRig, *edge.Outbound)
		code  checkfu.Code
		opens int64
	}{
		{"resource not registered", func(_ *edgeRig, o *edge.Outbound) { o.Action.Resource += "/x" }, authz.CodeCapabilityMismatch, 0},
		{"operation not registered", func(_ *edgeRig, o *edge.Outbound) { o.Action.Operation = "POST" }, authz.CodeCapabilityMismatch, 0},
		{"effect not registered", func(_ *edgeRig, o *edge.Outbound) { o.Action.Effect = authz.ExternalEffect }, authz.CodeCapabilityMismatch, 0},
		{"capability not registered", func(_ *edgeRig, o *edge.Outbound) { o.Action.Capability = "nope" }, authz.CodeCapabilityMismatch, 0},
		{"other credential", func(_ *edgeRig, o *edge.Outbound) { o.Connection.Credential.Namespace = "other" }, authz.CodeCapabilityMismatch, 0},
		{"outside the rules", func(rig *edgeRig, o *edge.Outbound) {
			*o = rig.outbound(rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`))
		}, egress.CodeNoRuleMatched, 0},
		{"lease revoked", func(rig *edgeRig, o *edge.Outbound) { _ = rig.leases.Revoke(o.Lease) }, authz.CodeLeaseRevoked, 1},
		{"lease of another scope", func(_ *edgeRig, o *edge.Outbound) { o.Scope.Actor = "mallory" }, authz.CodeLeaseOutOfScope, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newEdgeRig(t)
			out := rig.outbound(rig.list())
			tc.edit(rig, &out)
			_, err := rig.edge.Send(context.Background(), out)
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
	if _, err := zero.Send(context.Background(), edge.Outbound{}); err == nil {
		t.Error("the nil Edge sent")
	}
}
