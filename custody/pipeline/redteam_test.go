package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
)

// The red team's attacks on the call pipeline (docs/changes/wt-rtpipe.md):
// a hijacked agent that controls every call's capability and arguments.

// TestRacingCallsSpendTheLastUnitOnce: calls racing on a lease's last
// unit; exactly one reaches the edge, the others are refused for the
// budget, and the lease ends at zero, never below.
func TestRacingCallsSpendTheLastUnitOnce(t *testing.T) {
	r := newRig(t, 1)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = r.ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`)) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		wantCode(t, err, authz.CodeLeaseBudgetExhausted)
	}
	if ok != 1 || r.edge.Sent() != 1 || r.remaining() != 0 {
		t.Errorf("%d calls allowed, %d sent, %d left; want 1, 1, 0", ok, r.edge.Sent(), r.remaining())
	}
}

// TestApprovalSpentOnceUnderRace: one approval, calls of its exact action
// racing for it; one runs under it, the others are refused and spend no
// lease budget.
func TestApprovalSpentOnceUnderRace(t *testing.T) {
	r := newRig(t, 10)
	r.approve(createArgs, time.Minute)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs)) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		if !errorsIsAny(err, authz.CodeApprovalRequired, authz.CodeApprovalUsed) {
			t.Errorf("a racing call: %v, want approval_required or approval_used", err)
		}
	}
	if ok != 1 || r.edge.Sent() != 1 || r.remaining() != 9 {
		t.Errorf("%d calls ran, %d sent, %d left; want 1, 1, 9", ok, r.edge.Sent(), r.remaining())
	}
}

// TestApprovalBindsItsArguments: an approval of one argument set never
// lets another through, however close; a spelling of the same canonical
// arguments (white space, member order, an escape) is the same action.
func TestApprovalBindsItsArguments(t *testing.T) {
	for _, other := range []string{
		`{"title":"bug "}`, `{"title":"Bug"}`, `{"title":"bug","x":1}`, `{"title":"bu\u0067\u0000"}`,
		`{"title":"bug","title":"bug"}`, `{"Title":"bug","title":"bug"}`, `{"title":["bug"]}`,
	} {
		r := newRig(t, 10)
		r.approve(createArgs, time.Minute)
		_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(other))
		if !errorsIsAny(err, authz.CodeApprovalRequired, authz.CodeArgumentsInvalid) {
			t.Errorf("%s under the approval of %s: %v", other, createArgs, err)
		}
		if r.edge.Sent() != 0 || r.remaining() != 10 {
			t.Errorf("%s: sent %d, %d left", other, r.edge.Sent(), r.remaining())
		}
	}
	for _, same := range []string{` { "title" : "bug" } `, `{"title":"\u0062ug"}`, `{"title":"b\u0075g"}`} {
		r := newRig(t, 10)
		r.approve(createArgs, time.Minute)
		if _, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(same)); err != nil {
			t.Errorf("%s is the approved action: %v", same, err)
		}
	}
}

// TestRefusalsSpendNothing: a call refused for its capability, its
// permission, its arguments (strictness, schema, bounds, a GET's shape),
// the rules or a missing approval spends no lease budget, spends no
// approval, and never reaches the edge.
func TestRefusalsSpendNothing(t *testing.T) {
	deep := ""
	for range authz.MaxArgumentDepth + 1 {
		deep = `{"a":` + deep
	}
	deep += "1"
	for range authz.MaxArgumentDepth + 1 {
		deep += "}"
	}
	for _, c := range []struct {
		capability, args string
		code             error
	}{
		{"issues.delete", `{}`, authz.CodePermissionMissing},
		{"issues.list", `{"q":{"nested":1}}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":[1]}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":null}`, authz.CodeArgumentsInvalid},
		{"issues.list", `null`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":1e1001}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":1` + strings.Repeat("0", authz.MaxArgumentNumberBytes) + `}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":"a","q":"b"}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":"a","Q":"b"}`, authz.CodeArgumentsInvalid},
		{"issues.list", "{\"q\":\"\xff\"}", authz.CodeArgumentsInvalid},
		{"issues.list", `{} {}`, authz.CodeArgumentsInvalid},
		{"issues.list", `{"q":"\ud800"}`, authz.CodeArgumentsInvalid},
		{"issues.list", deep, authz.CodeArgumentsInvalid},
		{"issues.create", `{"title":"bug"}`, authz.CodeApprovalRequired},
		{"issues.create", `{"title":2}`, authz.CodeArgumentsInvalid},
		{"issues.close", `{}`, egress.CodeMethodDenied},
		{"model.chat", `{}`, authz.CodeCapabilityMismatch},
	} {
		r := newRig(t, 10)
		r.approve(`{"title":"approved"}`, time.Minute)
		plan, err := r.ch.Plan("issues.create", json.RawMessage(`{"title":"approved"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.ch.Call(context.Background(), c.capability, json.RawMessage(c.args))
		if !errorsIsAny(err, c.code) {
			t.Errorf("%s %.40s: %v, want %v", c.capability, c.args, err, c.code)
		}
		if _, live := r.approvals.Pending(plan.Binding); !live || r.remaining() != 10 || r.edge.Sent() != 0 {
			t.Errorf("%s %.40s: approval live %v, %d left, %d sent; want true, 10, 0", c.capability, c.args, live, r.remaining(), r.edge.Sent())
		}
	}
}

// TestPlanThenChangedState: what changed between the dry run and the call
// (the assignment revoked, the channel closed, the lease revoked or out of
// time, the approval's lifetime over) refuses the call; the plan authorizes
// nothing.
func TestPlanThenChangedState(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(r *rig)
		code   error
	}{
		{"assignment revoked", func(r *rig) {
			r.assignments.Revoke(r.assigned["issues.create"])
		}, authz.CodePermissionMissing},
		{"channel closed", func(r *rig) { r.ch.Close() }, pipeline.CodeChannelUnknown},
		{"lease revoked", func(r *rig) { _ = r.leases.Revoke(r.lease.ID) }, authz.CodeLeaseRevoked},
		{"lease expired", func(r *rig) {
			r.clock.Advance(59*time.Minute + 30*time.Second)
			r.approve(createArgs, 5*time.Minute)
			r.clock.Advance(time.Minute)
		}, authz.CodeLeaseExpired},
		{"approval expired", func(r *rig) { r.clock.Advance(2 * time.Minute) }, authz.CodeApprovalRequired},
	} {
		r := newRig(t, 10)
		r.approve(createArgs, time.Minute)
		if _, err := r.ch.Plan("issues.create", json.RawMessage(createArgs)); err != nil {
			t.Fatal(err)
		}
		c.change(r)
		_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
		if !errorsIsAny(err, c.code) {
			t.Errorf("%s: %v, want %v", c.name, err, c.code)
		}
		if r.edge.Sent() != 0 {
			t.Errorf("%s: the call reached the edge", c.name)
		}
	}
}

// TestLeaseRevokedAfterTheDecision: the lease revoked after the call was
// decided (between its check and its spend) stops the call before the
// edge, for a tool call and for a model call; the approval it carried is
// spent (Carry revalidates and spends it before the effect) and cannot
// run again.
func TestLeaseRevokedAfterTheDecision(t *testing.T) {
	r := newRig(t, 10)
	r.approve(createArgs, time.Minute)
	r.onRecord = func(ev authz.Evidence) {
		if ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeApproved {
			_ = r.leases.Revoke(r.lease.ID)
		}
	}
	_, err := r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
	wantCode(t, err, authz.CodeLeaseRevoked)
	if r.edge.Sent() != 0 {
		t.Error("a call whose lease was revoked after its decision reached the edge")
	}
}

// modelCall is an Anthropic Messages call of the rig's model.
func modelCall() pipeline.ModelCall {
	return pipeline.ModelCall{Method: "POST", Path: "/v1/messages",
		Body: []byte(`{"model":"claude-test","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)}
}

// TestModelCallRefusedAtTheLeaseSpendsNoRequest: a model call whose lease
// is revoked after its decision (between the lease check and the spend,
// a window that includes waiting for the session's token budget) is
// refused before the edge and spends none of the session's model budget.
func TestModelCallRefusedAtTheLeaseSpendsNoRequest(t *testing.T) {
	r := newRig(t, 10)
	r.onRecord = func(ev authz.Evidence) {
		if ev.Kind == authz.EvidenceGatewayDecision && ev.Outcome == authz.OutcomeApproved {
			_ = r.leases.Revoke(r.lease.ID)
		}
	}
	err := r.ch.Model(context.Background(), "model.chat", modelCall(), httptest.NewRecorder())
	wantCode(t, err, authz.CodeLeaseRevoked)
	if r.edge.Streamed() != 0 {
		t.Error("a model call whose lease was revoked reached the edge")
	}
	if used := pipeline.ModelUsed(r.p, member.Session, "model.chat"); used.Requests != 0 || used.Tokens != 0 {
		t.Errorf("the refused model call spent %+v of the session's model budget", used)
	}
}

func errorsIsAny(err error, codes ...error) bool {
	for _, c := range codes {
		if err != nil && errors.Is(err, c) {
			return true
		}
	}
	return false
}

// TestZeroChannelNeitherPanicsNorCalls: every method of a nil Channel and
// of one no pipeline opened answers without a panic, and its calls are
// refused channel_unknown (a caller that defers Close on a failed Open's
// nil Channel must not crash the plane).
func TestZeroChannelNeitherPanicsNorCalls(t *testing.T) {
	for _, ch := range []*pipeline.Channel{nil, {}} {
		ch.Close()
		ch.Close()
		if ch.Registry() != nil || ch.Tools() != nil || ch.ID() != "" || ch.Context().Actor != "" {
			t.Errorf("%p: a channel no pipeline opened reports a registry, tools, an id or a context", ch)
		}
		_, err := ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
		wantCode(t, err, pipeline.CodeChannelUnknown)
		_, err = ch.Plan("issues.list", json.RawMessage(`{}`))
		wantCode(t, err, pipeline.CodeChannelUnknown)
		wantCode(t, ch.Model(context.Background(), "model.chat", modelCall(), httptest.NewRecorder()), pipeline.CodeChannelUnknown)
	}
}

// TestModelHeadersCannotSmuggle: a model call's kept headers are the
// agent's own text; a value with CR or LF (a second header smuggled into
// the one the dialect keeps) or a header the rules do not list is
// refused before the edge and spends nothing; the agent's own key
// headers never reach the rules at all.
func TestModelHeadersCannotSmuggle(t *testing.T) {
	for _, h := range []http.Header{
		{"Anthropic-Version": {"2023-06-01\r\nX-Api-Key: stolen"}},
		{"Anthropic-Version": {"2023-06-01\nHost: evil.example"}},
		{"Anthropic-Beta": {"x"}}, // kept by the dialect, not listed by the rig's rules
	} {
		r := newRig(t, 10)
		call := modelCall()
		call.Header = h
		err := r.ch.Model(context.Background(), "model.chat", call, httptest.NewRecorder())
		if _, refused := checkfu.CodeOf(err); !refused {
			t.Errorf("%q: %v, want a refusal", h, err)
		}
		if r.edge.Streamed() != 0 || r.remaining() != 10 || pipeline.ModelUsed(r.p, member.Session, "model.chat").Requests != 0 {
			t.Errorf("%q: reached the edge or spent budget", h)
		}
	}
	r := newRig(t, 10)
	call := modelCall()
	call.Header = http.Header{"X-Api-Key": {"sk-agent"}, "Authorization": {"Bearer agent"}, "Anthropic-Version": {"2023-06-01"}}
	if err := r.ch.Model(context.Background(), "model.chat", call, httptest.NewRecorder()); err != nil {
		t.Fatalf("the agent's own key headers are dropped, not refused: %v", err)
	}
}

// TestChannelClosedMidCall: a channel closed while a call over it is at
// the edge. The call in flight was decided and its lease spent before:
// it completes and records its result; every later call over the
// channel is refused channel_unknown, spends nothing and is recorded
// with no request context.
func TestChannelClosedMidCall(t *testing.T) {
	r := newRig(t, 10)
	r.edge.entered, r.edge.release = make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := r.ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
		done <- err
	}()
	<-r.edge.entered
	r.ch.Close()
	_, err := r.ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
	wantCode(t, err, pipeline.CodeChannelUnknown)
	close(r.edge.release)
	if err := <-done; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	if r.remaining() != 9 || r.edge.Sent() != 1 {
		t.Errorf("%d left, %d sent; want 9 and 1 (the call in flight only)", r.remaining(), r.edge.Sent())
	}
	var refused, results int
	for _, ev := range r.evidence.Events() {
		switch {
		case ev.Code == pipeline.CodeChannelUnknown:
			refused++
			if ev.Request.Actor != "" || ev.Actor != "" || ev.Channel != "" {
				t.Errorf("the refusal over a closed channel names %+v", ev)
			}
		case ev.Kind == authz.EvidenceGatewayResult:
			results++
		}
	}
	if refused != 1 || results != 1 {
		t.Errorf("%d channel_unknown refusals and %d results recorded, want 1 and 1", refused, results)
	}
}

// TestApprovalThenDenial: an action approved, then denied by the
// approver before the call, is refused approval_required: the agent
// cannot run it on the earlier "yes" (it need not make the call it was
// allowed at once; it can wait for the approver to change their mind).
func TestApprovalThenDenial(t *testing.T) {
	r := newRig(t, 10)
	r.approve(createArgs, time.Minute)
	plan, err := r.ch.Plan("issues.create", json.RawMessage(createArgs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: plan.Binding, Approver: "user:carol", Approve: false, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	_, err = r.ch.Call(context.Background(), "issues.create", json.RawMessage(createArgs))
	wantCode(t, err, authz.CodeApprovalRequired)
	if r.edge.Sent() != 0 || r.remaining() != 10 {
		t.Errorf("sent %d, %d left; want nothing", r.edge.Sent(), r.remaining())
	}
}
