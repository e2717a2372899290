package authz_test

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/authz"
)

// TestDenialWithdrawsEarlierApproval (red team, docs/changes/wt-rtpipe.md):
// an approver who approved an action and then denies it is not
// overruled by the earlier "yes": the approval is no longer pending and
// Carry refuses it (the effect never runs). A denial of another binding
// withdraws nothing, and a later approval of the same binding is live
// again.
func TestDenialWithdrawsEarlierApproval(t *testing.T) {
	clock := newGovClock()
	a, _ := govApprovals(t, clock)
	yes := govDecide(t, a, true)
	other := govBinding()
	other.Action = "sha256:bb"
	kept, err := a.Decide(context.Background(), authz.ApprovalDecision{Binding: other, Approver: "bob", Approve: true, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	govDecide(t, a, false)
	if id, ok := a.Pending(govBinding()); ok {
		t.Fatalf("approval %s is still pending after its action was denied", id)
	}
	ran := false
	err = a.Carry(context.Background(), yes.ID, govBinding(), func(context.Context) error { ran = true; return nil })
	wantCode(t, err, authz.CodeApprovalUsed)
	if ran {
		t.Fatal("the effect ran under an approval its approver then denied")
	}
	if id, ok := a.Pending(other); !ok || id != kept.ID {
		t.Errorf("a denial of another action withdrew %s", kept.ID)
	}
	again := govDecide(t, a, true)
	if id, ok := a.Pending(govBinding()); !ok || id != again.ID {
		t.Errorf("an approval after the denial is not pending: %q, %v", id, ok)
	}
}
