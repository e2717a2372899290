package evidencelog_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
)

// fullContext is a request context with every field set, each to a value
// no other field holds.
func fullContext() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-9", Request: "req-1", Run: "run-1", Release: "checkfu@test",
	}
}

// contextOf returns the request context an event carries.
func contextOf(e eventlog.Event) checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: e.Actor, Role: e.Role, Tenant: e.Tenant, Workspace: e.Workspace, Project: e.Project,
		Session: e.SessionID, Request: e.RequestID, Run: e.RunID, Release: e.Release,
	}
}

// TestEveryKindCarriesTheContext maps one evidence event of every kind
// custody records, each with the whole request context, and reads the
// context back from the session log: all nine fields, for every kind, and
// the channel the call came through. Evidence without a context maps to
// an event with none.
func TestEveryKindCarriesTheContext(t *testing.T) {
	ctx := context.Background()
	l, sink := newSink(t)
	kinds := []struct {
		kind    authz.EvidenceKind
		outcome authz.Outcome
	}{
		{authz.EvidenceApprovalDecision, authz.OutcomeApproved},
		{authz.EvidenceApprovalResult, authz.OutcomeSucceeded},
		{authz.EvidenceEdgeCall, authz.OutcomeSucceeded},
		{authz.EvidenceGatewayDecision, authz.OutcomeApproved},
		{authz.EvidenceGatewayDecision, authz.OutcomeRefused},
		{authz.EvidenceGatewayResult, authz.OutcomeFailed},
	}
	for _, k := range kinds {
		ev := sample(k.kind, k.outcome)
		ev.Actor, ev.Request, ev.Channel = "", fullContext(), "ch-agent-1"
		if err := sink.Record(ctx, ev); err != nil {
			t.Fatalf("Record(%s %s): %v", k.kind, k.outcome, err)
		}
	}
	n := 0
	for e, err := range l.Read(ctx, "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		if got := contextOf(e.Event); got != fullContext() {
			t.Errorf("event %d (%s from %s) carries %+v, want %+v", e.Seq, e.Kind, kinds[n].kind, got, fullContext())
		}
		if e.Channel != "ch-agent-1" {
			t.Errorf("event %d (%s from %s) names channel %q, want %q", e.Seq, e.Kind, kinds[n].kind, e.Channel, "ch-agent-1")
		}
		n++
	}
	if n != len(kinds) {
		t.Fatalf("read %d events, want %d", n, len(kinds))
	}
	ev := sample(authz.EvidenceGatewayDecision, authz.OutcomeRefused)
	ev.Actor = ""
	e, err := evidencelog.Event(ev)
	if err != nil {
		t.Fatal(err)
	}
	if got := contextOf(e); got != (checkfu.RequestContext{}) || e.Channel != "" {
		t.Errorf("evidence without a context maps to an event carrying %+v on channel %q", got, e.Channel)
	}
}
