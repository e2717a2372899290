package authz_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
)

func govBinding() authz.ApprovalBinding {
	return authz.ApprovalBinding{
		Actor:  "alice",
		Grant:  "lease_1",
		Action: "sha256:aa",
		Effect: authz.ExternalEffect,
		Scope:  "session:s1",
	}
}

func govApprovals(t *testing.T, clock *govClock) (*authz.Approvals, *custodytest.MemoryEvidence) {
	t.Helper()
	sink := &custodytest.MemoryEvidence{}
	a, err := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a, sink
}

func govDecide(t *testing.T, a *authz.Approvals, approve bool) authz.Approval {
	t.Helper()
	ap, err := a.Decide(context.Background(), authz.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: approve, TTL: time.Minute})
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
	if ev[0].Kind != authz.EvidenceApprovalDecision || ev[0].Outcome != authz.OutcomeApproved || ev[0].Approver != "bob" {
		t.Errorf("decision event %+v", ev[0])
	}
	if ev[1].Kind != authz.EvidenceApprovalResult || ev[1].Outcome != authz.OutcomeSucceeded {
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
	if last := sink.Events()[len(sink.Events())-1]; last.Outcome != authz.OutcomeFailed {
		t.Fatalf("result event %+v, want failed", last)
	}
}

func TestCarryRefuses(t *testing.T) {
	clock := newGovClock()
	a, sink := govApprovals(t, clock)
	ran := 0
	effect := func(context.Context) error { ran++; return nil }
	ctx := context.Background()

	wantCode(t, a.Carry(ctx, "approval_nope", govBinding(), effect), authz.CodeApprovalUnknown)

	denied := govDecide(t, a, false)
	wantCode(t, a.Carry(ctx, denied.ID, govBinding(), effect), authz.CodeApprovalDenied)

	for _, m := range []func(*authz.ApprovalBinding){
		func(b *authz.ApprovalBinding) { b.Actor = "mallory" },
		func(b *authz.ApprovalBinding) { b.Grant = "lease_2" },
		func(b *authz.ApprovalBinding) { b.Action = "sha256:bb" },
		func(b *authz.ApprovalBinding) { b.Effect = authz.ReadOnly },
		func(b *authz.ApprovalBinding) { b.Scope = "session:s2" },
	} {
		ap := govDecide(t, a, true)
		b := govBinding()
		m(&b)
		wantCode(t, a.Carry(ctx, ap.ID, b, effect), authz.CodeApprovalMismatch)
	}

	used := govDecide(t, a, true)
	if err := a.Carry(ctx, used.ID, govBinding(), effect); err != nil {
		t.Fatal(err)
	}
	wantCode(t, a.Carry(ctx, used.ID, govBinding(), effect), authz.CodeApprovalUsed)

	expired := govDecide(t, a, true)
	clock.Advance(time.Minute)
	wantCode(t, a.Carry(ctx, expired.ID, govBinding(), effect), authz.CodeApprovalExpired)

	if ran != 1 {
		t.Fatalf("effect ran %d times, want only the one valid run", ran)
	}
	refused := 0
	for _, e := range sink.Events() {
		if e.Kind == authz.EvidenceApprovalResult && e.Outcome == authz.OutcomeRefused {
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

func TestDecideRefuses(t *testing.T) {
	a, sink := govApprovals(t, newGovClock())
	for _, m := range []func(*authz.ApprovalDecision){
		func(d *authz.ApprovalDecision) { d.Binding.Actor = "" },
		func(d *authz.ApprovalDecision) { d.Binding.Grant = "" },
		func(d *authz.ApprovalDecision) { d.Binding.Action = "" },
		func(d *authz.ApprovalDecision) { d.Binding.Effect = 0 },
		func(d *authz.ApprovalDecision) { d.Binding.Scope = "" },
		func(d *authz.ApprovalDecision) { d.Approver = "" },
		func(d *authz.ApprovalDecision) { d.Approver = d.Binding.Actor },
		func(d *authz.ApprovalDecision) { d.TTL = 0 },
		func(d *authz.ApprovalDecision) { d.TTL = time.Hour },
	} {
		d := authz.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute}
		m(&d)
		_, err := a.Decide(context.Background(), d)
		wantCode(t, err, authz.CodeApprovalInvalid)
	}
	if n := len(sink.Events()); n != 0 {
		t.Fatalf("%d events recorded for invalid decisions", n)
	}
}

type failingSink struct{}

func (failingSink) Record(context.Context, authz.Evidence) error { return errors.New("disk full") }

func TestDecisionNotKeptWhenNotRecorded(t *testing.T) {
	a, err := authz.NewApprovals(authz.ApprovalConfig{Evidence: failingSink{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Decide(context.Background(), authz.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute})
	var ee *authz.EvidenceError
	if !errors.As(err, &ee) || ee.Kind != authz.EvidenceApprovalDecision {
		t.Fatalf("Decide = %v, want an EvidenceError", err)
	}
	if _, err := authz.NewApprovals(authz.ApprovalConfig{}); err == nil {
		t.Fatal("NewApprovals without a sink succeeded")
	}
}

// Property: changing any one bound field of an approved, unexpired
// approval refuses with CodeApprovalMismatch; leaving all equal permits.
func TestApprovalBindingProperty(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.StringMatching(`[a-c]{1,3}`)
		eff := rapid.SampledFrom([]authz.Effect{authz.ReadOnly, authz.ExternalEffect})
		b := authz.ApprovalBinding{Actor: str.Draw(t, "actor"), Grant: str.Draw(t, "grant"), Action: str.Draw(t, "action"), Effect: eff.Draw(t, "effect"), Scope: str.Draw(t, "scope")}
		a := authz.Approval{ID: "approval_x", Binding: b, Approved: true, DecidedAt: now, ExpiresAt: now.Add(time.Minute)}
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
			att.Effect = authz.ReadOnly + authz.ExternalEffect - b.Effect
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
		if !errors.Is(err, authz.CodeApprovalMismatch) {
			t.Fatalf("Check(%+v) against %+v = %v, want approval_mismatch", att, b, err)
		}
	})
}

func TestApprovalCheckRefusesBeforeDecisionAndEmptyBinding(t *testing.T) {
	decided := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := authz.Approval{ID: "approval_x", Binding: govBinding(), Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}
	if err := a.Check(govBinding(), decided); err != nil {
		t.Fatalf("Check at decision = %v, want nil", err)
	}
	wantCode(t, a.Check(govBinding(), decided.Add(-time.Nanosecond)), authz.CodeApprovalExpired)

	// An approval that binds nothing permits nothing, not even the
	// equally empty attempt.
	empty := authz.Approval{ID: "approval_y", Approved: true, DecidedAt: decided, ExpiresAt: decided.Add(time.Minute)}
	wantCode(t, empty.Check(authz.ApprovalBinding{}, decided), authz.CodeApprovalMismatch)
}
