package evidencelog_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
)

// New makes a session log the evidence sink of custody's approvals:
// every decision and every result becomes a durable, chained event.
func ExampleNew() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	sink, err := evidencelog.New(l, "session-1")
	if err != nil {
		panic(err)
	}
	approvals, _ := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock})
	bound := authz.ApprovalBinding{Actor: "alice", Grant: "lease_1", Action: "sha256:0a1b", Effect: authz.ExternalEffect, Scope: "session:s1"}
	a, _ := approvals.Decide(ctx, authz.ApprovalDecision{Binding: bound, Approver: "bob", Approve: true, TTL: time.Minute})
	_ = approvals.Carry(ctx, a.ID, bound, func(context.Context) error { return nil })

	for e, err := range l.Read(ctx, "session-1", 1) {
		fmt.Println(e.Seq, e.Kind, e.Decision, e.Result, e.Label, err)
	}
	_, err = eventlog.Verify(ctx, l.Store(), "session-1")
	fmt.Println("verifies:", err == nil)

	// A session id must be an identifier.
	_, err = evidencelog.New(l, "session 1")
	fmt.Println(errors.Is(err, eventlog.CodeSessionInvalid))
	// Output:
	// 1 approval_decision allow approved mock <nil>
	// 2 approval_result none succeeded mock <nil>
	// verifies: true
	// true
}

func ExampleEvent() {
	ev, err := evidencelog.Event(authz.Evidence{
		Kind: authz.EvidenceApprovalResult, Label: checkfu.LabelIsolated, Approval: "apr-1",
		Actor: "alice", Grant: "lease_1", Action: "sha256:0a1b", Effect: authz.ExternalEffect,
		Scope: "session:s1", Outcome: authz.OutcomeRefused, Code: authz.CodeApprovalUsed,
	})
	fmt.Println(ev.Kind, ev.Decision, ev.Result, ev.Code, ev.EffectClass, err)

	// A kind or outcome it does not know is refused, never guessed.
	_, err = evidencelog.Event(authz.Evidence{Kind: "future_kind", Outcome: authz.OutcomeApproved})
	fmt.Println(errors.Is(err, evidencelog.CodeEvidenceUnknown))
	// Output:
	// approval_result deny refused approval_used external_effect <nil>
	// true
}
