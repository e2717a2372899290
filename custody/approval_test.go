package custody_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
)

func govBinding() custody.ApprovalBinding {
	return custody.ApprovalBinding{
		Actor:  "alice",
		Grant:  "lease_1",
		Action: "sha256:aa",
		Effect: custody.ExternalEffect,
		Scope:  "session:s1",
	}
}

func govApprovals(t *testing.T, clock *govClock) (*custody.Approvals, *custody.MemoryEvidence) {
	t.Helper()
	sink := &custody.MemoryEvidence{}
	a, err := custody.NewApprovals(custody.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a, sink
}

func govDecide(t *testing.T, a *custody.Approvals, approve bool) custody.Approval {
	t.Helper()
	ap, err := a.Decide(context.Background(), custody.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: approve, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func TestCarryRecordsDecisionAndResultSeparately(t *testing.T) {
	clock := newGovClock()
	a, sink := govApprovals(t, clock)
	ap := govDecide(t, a, true)
	ran := 0
	if err := a.Carry(context.Background(), ap.ID, govBinding(), func(context.Context) error { ran++; return nil }); err != nil {
		t.Fatal(err)
	}
	if ran != 1 {
		t.Fatalf("effect ran %d times", ran)
	}
	ev := sink.Events()
	if len(ev) != 2 {
		t.Fatalf("%d events, want a decision and a result: %+v", len(ev), ev)
	}
	if ev[0].Kind != custody.EvidenceApprovalDecision || ev[0].Outcome != custody.OutcomeApproved || ev[0].Approver != "bob" {
		t.Errorf("decision event %+v", ev[0])
	}
	if ev[1].Kind != custody.EvidenceApprovalResult || ev[1].Outcome != custody.OutcomeSucceeded {
		t.Errorf("result event %+v", ev[1])
	}
	for _, e := range ev {
		if e.Approval != ap.ID || e.Action != govBinding().Action || e.Label != checkfu.LabelMock {
			t.Errorf("event %+v does not name approval %s, its action and the mock label", e, ap.ID)
		}
	}

	failing := govDecide(t, a, true)
	boom := errors.New("upstream 500")
	if err := a.Carry(context.Background(), failing.ID, govBinding(), func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Carry = %v, want the effect's error", err)
	}
	if last := sink.Events()[len(sink.Events())-1]; last.Outcome != custody.OutcomeFailed {
		t.Fatalf("result event %+v, want failed", last)
	}
}

// Mutant: deleting the unknown, spent, denied, expiry or any binding-field
// check makes TestCarryRefuses fail; so does running the effect before
// revalidation (the effect counter).
func TestCarryRefuses(t *testing.T) {
	clock := newGovClock()
	a, sink := govApprovals(t, clock)
	ran := 0
	effect := func(context.Context) error { ran++; return nil }
	ctx := context.Background()

	wantCode(t, a.Carry(ctx, "approval_nope", govBinding(), effect), custody.CodeApprovalUnknown)

	denied := govDecide(t, a, false)
	wantCode(t, a.Carry(ctx, denied.ID, govBinding(), effect), custody.CodeApprovalDenied)

	for _, m := range []func(*custody.ApprovalBinding){
		func(b *custody.ApprovalBinding) { b.Actor = "mallory" },
		func(b *custody.ApprovalBinding) { b.Grant = "lease_2" },
		func(b *custody.ApprovalBinding) { b.Action = "sha256:bb" },
		func(b *custody.ApprovalBinding) { b.Effect = custody.ReadOnly },
		func(b *custody.ApprovalBinding) { b.Scope = "session:s2" },
	} {
		ap := govDecide(t, a, true)
		b := govBinding()
		m(&b)
		wantCode(t, a.Carry(ctx, ap.ID, b, effect), custody.CodeApprovalMismatch)
	}

	used := govDecide(t, a, true)
	if err := a.Carry(ctx, used.ID, govBinding(), effect); err != nil {
		t.Fatal(err)
	}
	wantCode(t, a.Carry(ctx, used.ID, govBinding(), effect), custody.CodeApprovalUsed)

	expired := govDecide(t, a, true)
	clock.Advance(time.Minute)
	wantCode(t, a.Carry(ctx, expired.ID, govBinding(), effect), custody.CodeApprovalExpired)

	if ran != 1 {
		t.Fatalf("effect ran %d times, want only the one valid run", ran)
	}
	refused := 0
	for _, e := range sink.Events() {
		if e.Kind == custody.EvidenceApprovalResult && e.Outcome == custody.OutcomeRefused {
			if e.Code == "" {
				t.Errorf("refused result without a code: %+v", e)
			}
			refused++
		}
	}
	if refused != 9 {
		t.Fatalf("%d refused results recorded, want 9", refused)
	}
}

// Mutant: deleting any Decide validation case (including the
// self-approval check) makes TestDecideRefuses fail.
func TestDecideRefuses(t *testing.T) {
	a, sink := govApprovals(t, newGovClock())
	for _, m := range []func(*custody.ApprovalDecision){
		func(d *custody.ApprovalDecision) { d.Binding.Actor = "" },
		func(d *custody.ApprovalDecision) { d.Binding.Grant = "" },
		func(d *custody.ApprovalDecision) { d.Binding.Action = "" },
		func(d *custody.ApprovalDecision) { d.Binding.Effect = 0 },
		func(d *custody.ApprovalDecision) { d.Binding.Scope = "" },
		func(d *custody.ApprovalDecision) { d.Approver = "" },
		func(d *custody.ApprovalDecision) { d.Approver = d.Binding.Actor },
		func(d *custody.ApprovalDecision) { d.TTL = 0 },
		func(d *custody.ApprovalDecision) { d.TTL = time.Hour },
	} {
		d := custody.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute}
		m(&d)
		_, err := a.Decide(context.Background(), d)
		wantCode(t, err, custody.CodeApprovalInvalid)
	}
	if n := len(sink.Events()); n != 0 {
		t.Fatalf("%d events recorded for invalid decisions", n)
	}
}

type failingSink struct{}

func (failingSink) Record(context.Context, custody.Evidence) error { return errors.New("disk full") }

// Mutant: ignoring the sink's error in Decide makes this test fail.
func TestDecisionNotKeptWhenNotRecorded(t *testing.T) {
	a, err := custody.NewApprovals(custody.ApprovalConfig{Evidence: failingSink{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Decide(context.Background(), custody.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute})
	var ee *custody.EvidenceError
	if !errors.As(err, &ee) || ee.Kind != custody.EvidenceApprovalDecision {
		t.Fatalf("Decide = %v, want an EvidenceError", err)
	}
	if _, err := custody.NewApprovals(custody.ApprovalConfig{}); err == nil {
		t.Fatal("NewApprovals without a sink succeeded")
	}
}

// Property: changing any one bound field of an approved, unexpired
// approval refuses with CodeApprovalMismatch; leaving all equal permits.
//
// Mutant: deleting any one field comparison in Approval.Check makes this
// property fail.
func TestApprovalBindingProperty(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.StringMatching(`[a-c]{1,3}`)
		eff := rapid.SampledFrom([]custody.Effect{custody.ReadOnly, custody.ExternalEffect})
		b := custody.ApprovalBinding{Actor: str.Draw(t, "actor"), Grant: str.Draw(t, "grant"), Action: str.Draw(t, "action"), Effect: eff.Draw(t, "effect"), Scope: str.Draw(t, "scope")}
		a := custody.Approval{ID: "approval_x", Binding: b, Approved: true, DecidedAt: now, ExpiresAt: now.Add(time.Minute)}
		att := b
		field := rapid.IntRange(0, 5).Draw(t, "field")
		other := str.Draw(t, "value")
		switch field {
		case 0:
			att.Actor = other
		case 1:
			att.Grant = other
		case 2:
			att.Action = other
		case 3:
			att.Effect = custody.ReadOnly + custody.ExternalEffect - b.Effect
		case 4:
			att.Scope = other
		}
		err := a.Check(att, now)
		if att == b {
			if err != nil {
				t.Fatalf("equal binding refused: %v", err)
			}
			return
		}
		if !errors.Is(err, custody.CodeApprovalMismatch) {
			t.Fatalf("Check(%+v) against %+v = %v, want approval_mismatch", att, b, err)
		}
	})
}

// Mutant: deleting "now.Before(a.DecidedAt)" from Approval.Check, or its
// a.Binding.complete() check, makes this test fail.
func TestApprovalCheckRefusesBeforeDecisionAndEmptyBinding(t *testing.T) {
	decided := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := custody.Approval{ID: "approval_x", Binding: govBinding(), Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}
	if err := a.Check(govBinding(), decided); err != nil {
		t.Fatalf("Check at decision = %v, want nil", err)
	}
	wantCode(t, a.Check(govBinding(), decided.Add(-time.Nanosecond)), custody.CodeApprovalExpired)

	// An approval that binds nothing permits nothing, not even the
	// equally empty attempt.
	empty := custody.Approval{ID: "approval_y", Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}
	wantCode(t, empty.Check(custody.ApprovalBinding{}, decided), custody.CodeApprovalMismatch)
}
