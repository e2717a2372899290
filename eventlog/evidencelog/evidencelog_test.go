package evidencelog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
)

func sample(kind authz.EvidenceKind, outcome authz.Outcome) authz.Evidence {
	return authz.Evidence{
		Kind: kind, Label: checkfu.LabelIsolated, Time: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Approval: "apr-1", Approver: "user:alice", Actor: "agent:7", Grant: "grant-3",
		Action: "sha256:0a1b", Effect: authz.ExternalEffect, Scope: "repo:acme/app", Outcome: outcome,
	}
}

// newSink returns a Sink over a fresh in-memory log, session "sess-1".
func newSink(t *testing.T) (*eventlog.Log, *evidencelog.Sink) {
	t.Helper()
	l, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := evidencelog.New(l, "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	return l, sink
}

func TestRecordDecisionAndResultSeparately(t *testing.T) {
	ctx := context.Background()
	l, sink := newSink(t)
	if err := sink.Record(ctx, sample(authz.EvidenceApprovalDecision, authz.OutcomeApproved)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Record(ctx, sample(authz.EvidenceApprovalResult, authz.OutcomeSucceeded)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for e, err := range l.Read(ctx, "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %s %s %s %s %s %s", e.Seq, e.Kind, e.Decision, e.Result, e.Label, e.Grant, e.EffectClass, e.Scope))
	}
	want := []string{
		"1 approval_decision allow approved isolated grant-3 external_effect repo:acme/app",
		"2 approval_result none succeeded isolated grant-3 external_effect repo:acme/app",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

func TestRefusesWhatIsNotAnIdentifier(t *testing.T) {
	ev := sample(authz.EvidenceApprovalResult, authz.OutcomeFailed)
	ev.Scope = "repo acme/app with a space"
	if _, err := evidencelog.Event(ev); !errors.Is(err, eventlog.CodeEventInvalid) {
		t.Errorf("Event(scope with a space) = %v, want invalid_event", err)
	}
	ev = sample("approval_maybe", authz.OutcomeFailed)
	if _, err := evidencelog.Event(ev); !errors.Is(err, evidencelog.CodeEvidenceUnknown) {
		t.Errorf("Event(unknown kind) = %v, want evidence_unknown", err)
	}
	ev = sample(authz.EvidenceApprovalDecision, "maybe")
	if _, err := evidencelog.Event(ev); !errors.Is(err, evidencelog.CodeEvidenceUnknown) {
		t.Errorf("Event(unknown outcome) = %v, want evidence_unknown", err)
	}
	// An edge call: an outcome that is no call's terminal result, and a
	// tool name that is free text.
	ev = sample(authz.EvidenceEdgeCall, authz.OutcomeApproved)
	if _, err := evidencelog.Event(ev); !errors.Is(err, evidencelog.CodeEvidenceUnknown) {
		t.Errorf("Event(edge call approved) = %v, want evidence_unknown", err)
	}
	ev = sample(authz.EvidenceEdgeCall, authz.OutcomeSucceeded)
	ev.Tool = "list issues for acme"
	if _, err := evidencelog.Event(ev); !errors.Is(err, eventlog.CodeEventInvalid) {
		t.Errorf("Event(edge call tool with spaces) = %v, want invalid_event", err)
	}
}

func ExampleSink_Record() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	sink, _ := evidencelog.New(l, "sess-1")
	err := sink.Record(ctx, authz.Evidence{
		Kind: authz.EvidenceApprovalDecision, Label: checkfu.LabelIsolated, Approval: "apr-1",
		Approver: "user:alice", Grant: "grant-3", Action: "sha256:0a1b", Effect: authz.ExternalEffect,
		Scope: "repo:acme/app", Outcome: authz.OutcomeDenied,
	})
	fmt.Println(err)
	for e := range l.Read(ctx, "sess-1", 1) {
		fmt.Println(e.Seq, e.Kind, e.Decision, e.ApprovalID)
	}
	// Output:
	// <nil>
	// 1 approval_decision deny apr-1
}

// TestRecordEdgeCalls records what custody's Edge hands its sink for a
// refused, a succeeded and a failed call. Before edge calls were mapped,
// Record refused them, so an Edge with this sink withheld every response.
func TestRecordEdgeCalls(t *testing.T) {
	ctx := context.Background()
	l, sink := newSink(t)
	call := func(outcome authz.Outcome, code checkfu.Code, status int) authz.Evidence {
		return authz.Evidence{
			Kind: authz.EvidenceEdgeCall, Label: checkfu.LabelIsolated, Actor: "agent:7", Grant: "lease-1",
			Action: "sha256:0a1b", Effect: authz.ReadOnly, Outcome: outcome, Code: code, Status: status,
			Capability: "github.issues.read", Tool: "list_issues",
			Provider: checkfu.ProviderRevision{Provider: "github", Revision: "3"},
		}
	}
	for _, ev := range []authz.Evidence{
		call(authz.OutcomeRefused, "no_rule_matched", 0),
		call(authz.OutcomeSucceeded, "", 201),
		call(authz.OutcomeFailed, "upstream_failed", 0),
	} {
		if err := sink.Record(ctx, ev); err != nil {
			t.Fatalf("Record(edge call %s): %v", ev.Outcome, err)
		}
	}
	var got []string
	for e, err := range l.Read(ctx, "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s %s %s", e.Kind, e.Decision, e.Result, e.Code, e.Tool.Name, e.EffectID, e.Provider, e.Grant, e.EffectClass))
	}
	want := []string{
		"tool_call deny refused no_rule_matched list_issues github.issues.read github@3 lease-1 read_only",
		"tool_call allow http_201  list_issues github.issues.read github@3 lease-1 read_only",
		"tool_call allow failed upstream_failed list_issues github.issues.read github@3 lease-1 read_only",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if _, err := evidencelog.New(nil, "sess-1"); !errors.Is(err, eventlog.CodeStoreMissing) {
		t.Errorf("New(nil log) = %v, want %s", err, eventlog.CodeStoreMissing)
	}
}

// TestRecordModelResults: a model call's result is a settlement event
// with the model, the status, the code and the usage, and nothing of the
// prompt or the completion (the evidence has no field for them).
func TestRecordModelResults(t *testing.T) {
	ctx := context.Background()
	l, sink := newSink(t)
	res := func(outcome authz.Outcome, code checkfu.Code, status int, in, out int64, d time.Duration) authz.Evidence {
		return authz.Evidence{
			Kind: authz.EvidenceModelResult, Label: checkfu.LabelMock, Actor: "agent:7", Grant: "lease-1",
			Action: "sha256:0a1b", Effect: authz.ReadOnly, Outcome: outcome, Code: code, Status: status,
			Capability: "model.anthropic", Tool: "claude-sonnet-4-5", Model: "claude-sonnet-4-5",
			InputTokens: in, OutputTokens: out, Duration: d, Scope: "sess-1",
		}
	}
	for _, ev := range []authz.Evidence{
		res(authz.OutcomeSucceeded, "", 200, 100, 10, 1500*time.Millisecond),
		res(authz.OutcomeFailed, "provider_failed", 529, 0, 0, 0),
		res(authz.OutcomeRefused, "model_budget_exhausted", 0, -1, 0, -time.Second),
	} {
		if err := sink.Record(ctx, ev); err != nil {
			t.Fatalf("Record(model result %s): %v", ev.Outcome, err)
		}
	}
	if err := sink.Record(ctx, res("approved", "", 0, 0, 0, 0)); !errors.Is(err, evidencelog.CodeEvidenceUnknown) {
		t.Errorf("a model result approved: %v", err)
	}
	var got []string
	for e, err := range l.Read(ctx, "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s", e.Kind, e.Decision, e.Result, e.Code, e.Tool.Name, e.EffectID, e.Scope))
	}
	want := []string{
		"settlement none http_200  claude-sonnet-4-5 model.anthropic in=100/out=10/ms=1500",
		"settlement none http_529 provider_failed claude-sonnet-4-5 model.anthropic in=0/out=0/ms=0",
		"settlement none refused model_budget_exhausted claude-sonnet-4-5 model.anthropic in=0/out=0/ms=0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}
