package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
)

const createArgs = `{"title":"bug"}`

// TestApprovalRequiredSpendsNothing: a call refused approval_required
// leaves the lease's remaining budget unchanged, however often it is
// tried, and never reaches the edge.
func TestApprovalRequiredSpendsNothing(t *testing.T) {
	r := newRig(t, 10)
	before := r.remaining()
	for range 5 {
		_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
		wantCode(t, err, authz.CodeApprovalRequired)
	}
	if after := r.remaining(); after != before {
		t.Errorf("refused calls spent lease budget: %d -> %d", before, after)
	}
	if n := r.edge.Sent(); n != 0 {
		t.Errorf("the edge was handed %d refused calls", n)
	}
	// The approved call spends exactly one unit, as it leaves.
	r.approve(createArgs, time.Minute)
	if _, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs)); err != nil {
		t.Fatal(err)
	}
	if after := r.remaining(); after != before-1 || r.edge.Sent() != 1 {
		t.Errorf("the approved call: budget %d -> %d, edge handed %d calls; want one unit and one call", before, after, r.edge.Sent())
	}
}

// TestApprovalBeforeLease: the approval is checked before the lease. A
// call with neither an approval nor budget left is refused
// approval_required, not for its lease.
func TestApprovalBeforeLease(t *testing.T) {
	r := newRig(t, 1)
	if _, err := r.ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
	wantCode(t, err, authz.CodeApprovalRequired)
	r.approve(createArgs, time.Minute)
	_, err = r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
	wantCode(t, err, authz.CodeLeaseBudgetExhausted)
}

// TestExpiredApprovalDoesNotShadow: expired approvals of the same action
// beside a live one never shadow it, and with only expired ones the call
// is refused approval_required with nothing spent.
func TestExpiredApprovalDoesNotShadow(t *testing.T) {
	r := newRig(t, 10)
	for range 16 {
		r.approve(createArgs, time.Minute)
	}
	r.clock.Advance(2 * time.Minute)
	before := r.remaining()
	_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
	wantCode(t, err, authz.CodeApprovalRequired)
	if after := r.remaining(); after != before {
		t.Errorf("a call under expired approvals spent budget: %d -> %d", before, after)
	}
	r.approve(createArgs, time.Minute)
	for range 4 {
		r.approve(`{"title":"other"}`, time.Minute)
	}
	if _, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs)); err != nil {
		t.Fatalf("the live approval beside 16 expired ones: %v", err)
	}
	if after := r.remaining(); after != before-1 {
		t.Errorf("budget %d -> %d, want one unit spent", before, after)
	}
}

// TestPlanIsTheCall: the dry run gives the binding the call then runs
// under, records nothing and spends nothing; it refuses what the call
// would be refused.
func TestPlanIsTheCall(t *testing.T) {
	r := newRig(t, 10)
	events := len(r.evidence.Events())
	plan, err := r.ch.Plan("issues.create", json.RawMessage(`{ "title" : "bug" }`))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Binding.Actor != member.Actor || plan.Binding.Grant != r.lease.ID || plan.Binding.Scope != member.Session ||
		plan.Binding.Effect != authz.ExternalEffect || plan.Binding.Action != plan.Action || string(plan.Arguments) != createArgs {
		t.Errorf("plan %+v", plan)
	}
	if len(r.evidence.Events()) != events || r.remaining() != 10 || r.edge.Sent() != 0 {
		t.Error("the dry run recorded, spent or sent something")
	}
	_, err = r.ch.Plan("issues.create", json.RawMessage(`{"title":1}`))
	wantCode(t, err, authz.CodeArgumentsInvalid)
	_, err = r.ch.Plan("issues.delete", json.RawMessage(`{}`))
	wantCode(t, err, authz.CodePermissionMissing)
	r.ch.Close()
	_, err = r.ch.Plan("issues.create", json.RawMessage(createArgs))
	if err == nil {
		t.Error("a closed channel planned a call")
	}
}

// TestProviderErrorIsAFailure: a provider's 4xx or 5xx answer is the
// caller's answer, but the result and approval_result events record the
// terminal result the caller got, a failure, not a success.
func TestProviderErrorIsAFailure(t *testing.T) {
	for _, status := range []int{404, 503} {
		r := newRig(t, 10)
		r.edge.status = status
		r.approve(createArgs, time.Minute)
		resp, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
		if err != nil || resp.Status != status {
			t.Fatalf("status %d: the caller got %+v, %v; want the answer", status, resp, err)
		}
		var result, approval *authz.Evidence
		for _, ev := range r.evidence.Events() {
			switch ev.Kind {
			case authz.EvidenceGatewayResult:
				result = &ev
			case authz.EvidenceApprovalResult:
				approval = &ev
			}
		}
		if result == nil || result.Outcome != authz.OutcomeFailed || result.Code != pipeline.CodeProviderFailed || result.Status != status {
			t.Errorf("status %d: gateway_result %+v, want failed with %s", status, result, pipeline.CodeProviderFailed)
		}
		if approval == nil || approval.Outcome != authz.OutcomeFailed || approval.Code != pipeline.CodeProviderFailed {
			t.Errorf("status %d: approval_result %+v, want failed with %s", status, approval, pipeline.CodeProviderFailed)
		}
	}
}

// Two Connections for one credential are refused: one set of egress
// rules would otherwise be dropped without a word, and which set
// decides a call would depend on their order.
func TestNewRefusesTwoConnectionsForOneCredential(t *testing.T) {
	r := newRig(t, 10)
	cfg := r.cfg
	first := cfg.Connections[0]
	wider, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/", Methods: []string{"GET", "POST", "DELETE"}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Connections = []edge.Connection{first, {Credential: first.Credential, Rules: wider}}
	p, err := pipeline.New(cfg)
	if !errors.Is(err, checkfu.CodeConfigInvalid) || p != nil {
		t.Fatalf("New with two Connections for %s = %v, %v; want config_invalid", first.Credential, p, err)
	}
	cfg.Connections = []edge.Connection{first}
	if _, err := pipeline.New(cfg); err != nil {
		t.Fatalf("New with one Connection: %v", err)
	}
}
