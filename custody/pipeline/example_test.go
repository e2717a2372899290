package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/authz"
)

// A call runs every step in order; an external effect without an approval
// is refused and spends nothing; the dry run gives the binding an
// approval must carry, and then the call runs.
func ExampleChannel_Call() {
	r := newRig(&testing.T{}, 10)
	args := json.RawMessage(`{"title":"bug"}`)
	_, err := r.ch.Call(context.Background(), "issues.create", args)
	fmt.Println(errors.Is(err, authz.CodeApprovalRequired), r.remaining())

	plan, _ := r.ch.Plan("issues.create", args)
	_, _ = r.approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: plan.Binding, Approver: "user:carol", Approve: true, TTL: time.Minute})
	resp, err := r.ch.Call(context.Background(), "issues.create", args)
	fmt.Println(resp.Status, err, r.remaining())
	// Output:
	// true 10
	// 200 <nil> 9
}

// Plan is the dry run: what the call would be, recording and spending
// nothing.
func ExampleChannel_Plan() {
	r := newRig(&testing.T{}, 10)
	plan, err := r.ch.Plan("issues.create", json.RawMessage(`{ "title": "bug" }`))
	fmt.Println(string(plan.Arguments), plan.Effect, plan.Binding.Action == plan.Action, err)
	// Output:
	// {"title":"bug"} external_effect true <nil>
}
