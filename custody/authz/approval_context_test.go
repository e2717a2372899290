package authz_test

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// TestApprovalEvidenceCarriesTheContext: the decision carries the
// approver's request context, and each result (a refused attempt and a
// carried one) the context of the call that attempted it, every field.
func TestApprovalEvidenceCarriesTheContext(t *testing.T) {
	approver := checkfu.RequestContext{Actor: "bob", Role: "approver", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-bob", Request: "req-approve", Release: "checkfu@test"}
	caller := checkfu.RequestContext{Actor: "alice", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "s1", Request: "req-call", Run: "run-1", Release: "checkfu@test"}
	a, sink := govApprovals(t, newGovClock())
	ap, err := a.Decide(checkfu.WithRequestContext(context.Background(), approver),
		authz.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := checkfu.WithRequestContext(context.Background(), caller)
	other := govBinding()
	other.Action = "sha256:bb"
	_ = a.Carry(ctx, ap.ID, other, func(context.Context) error { return nil }) // refused: another action
	if err := a.Carry(ctx, ap.ID, govBinding(), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []checkfu.RequestContext{approver, caller, caller}
	ev := sink.Events()
	if len(ev) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(ev), len(want), ev)
	}
	for i, e := range ev {
		if e.Request != want[i] {
			t.Errorf("event %d (%s %s) carries %+v, want %+v", i, e.Kind, e.Outcome, e.Request, want[i])
		}
	}
}
