package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// contextOf returns the request context a logged event carries.
func contextOf(e eventlog.Event) checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: e.Actor, Role: e.Role, Tenant: e.Tenant, Workspace: e.Workspace, Project: e.Project,
		Session: e.SessionID, Request: e.RequestID, Run: e.RunID, Release: e.Release,
	}
}

// logGateway returns a session log and a gateway over the rig whose
// decisions, results and approvals record into it (through evidencelog),
// and the approvals it uses.
func logGateway(t *testing.T, r *rigtest.Rig) (*eventlog.Log, *gateway.Gateway, *authz.Approvals, *evidencelog.Sink) {
	t.Helper()
	l, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := evidencelog.New(l, rigtest.Member().Session)
	if err != nil {
		t.Fatal(err)
	}
	approvals, err := authz.NewApprovals(authz.ApprovalConfig{Evidence: sink, Label: checkfu.LabelMock, Now: r.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{
		Authenticator: r.Tokens, Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Approvals: approvals, Edge: r.Edge, Evidence: sink, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.Clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, gw, approvals, sink
}

func openChannel(t *testing.T, r *rigtest.Rig, gw *gateway.Gateway, rc checkfu.RequestContext) *gateway.Channel {
	t.Helper()
	tok, err := r.Tokens.Issue(rc, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := gw.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestEveryHopCarriesTheContext runs an approved external-effect call
// and reads back every event of it: the approver's decision (under the
// approver's own context), the gateway's decision, the approval's result
// after its revalidation, the edge's call (through the edge's own sink)
// and the gateway's result. Each carries every field of its context,
// role, tenant, workspace, project and session included.
func TestEveryHopCarriesTheContext(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.create")
	l, gw, approvals, _ := logGateway(t, r)
	args := `{"title":"bug"}`
	r.ApproveWith(checkfu.WithRequestContext(context.Background(), rigtest.Approver()), approvals, args)
	ch := openChannel(t, r, gw, rigtest.Member())
	if resp, err := ch.Call(context.Background(), "issues.create", json.RawMessage(args)); err != nil || resp.Status != 200 {
		t.Fatalf("approved call: %+v, %v", resp, err)
	}
	var got []string
	for e, err := range l.Read(context.Background(), rigtest.Member().Session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		want := rigtest.Member()
		if e.Kind == eventlog.KindApprovalDecision {
			// The decision is the approver's request; the binding names
			// the member as the actor it lets act.
			want = rigtest.Approver()
			want.Actor = rigtest.Member().Actor
		}
		if c := contextOf(e.Event); c != want {
			t.Errorf("event %d (%s) carries %+v, want %+v", e.Seq, e.Kind, c, want)
		}
		got = append(got, fmt.Sprintf("%s/%s", e.Kind, e.Result))
	}
	want := "[approval_decision/approved tool_call/authorized approval_result/succeeded tool_call/http_200]"
	if fmt.Sprint(got) != want {
		t.Errorf("events %v, want %s", got, want)
	}
	// The edge's own evidence of the call carries the channel's context
	// too: it took it from the Go context the gateway handed it.
	edgeEvents := r.EdgeEvidence.Events()
	if len(edgeEvents) != 1 {
		t.Fatalf("edge events %+v, want one", edgeEvents)
	}
	e, err := evidencelog.Event(edgeEvents[0])
	if err != nil {
		t.Fatal(err)
	}
	if c := contextOf(e); c != rigtest.Member() {
		t.Errorf("the edge's event carries %+v, want %+v", c, rigtest.Member())
	}
}

// TestChannelProbeLeavesATrace: a call on a closed channel, and one on a
// channel another gateway opened, each leave a denial in the log with the
// code and the gateway's label and no context at all (not the closed
// channel's, not the other gateway's). When the sink cannot take it, the
// refusal stands.
func TestChannelProbeLeavesATrace(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	l, gw, _, _ := logGateway(t, r)
	closed := openChannel(t, r, gw, rigtest.Member())
	closed.Close()
	other := r.Channel(rigtest.Member()) // the rig's own gateway's
	for _, ch := range []*gateway.Channel{closed, other, nil} {
		if _, err := gw.Call(context.Background(), ch, "issues.list", json.RawMessage(`{}`)); !errors.Is(err, pipeline.CodeChannelUnknown) {
			t.Fatalf("probe: %v, want %s", err, pipeline.CodeChannelUnknown)
		}
	}
	n := 0
	for e, err := range l.Read(context.Background(), rigtest.Member().Session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if e.Kind != eventlog.KindDenial || e.Decision != eventlog.DecisionDeny || e.Code != string(pipeline.CodeChannelUnknown) || e.Label != checkfu.LabelMock {
			t.Errorf("probe %d logged %+v, want a denial with %s", n, e.Event, pipeline.CodeChannelUnknown)
		}
		if c := contextOf(e.Event); c != (checkfu.RequestContext{}) || e.Scope != "" || e.EffectID != "" || e.Tool.Name != "" {
			t.Errorf("probe %d logged a context or a capability it cannot know: %+v", n, e.Event)
		}
	}
	if n != 3 {
		t.Fatalf("%d probes logged, want 3", n)
	}
	// A sink that fails: still refused, and the failure is reported.
	gwFail, err := gateway.New(gateway.Config{
		Authenticator: r.Tokens, Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Edge: r.Edge, Evidence: failingSink{}, Label: checkfu.LabelMock, Service: "runner", Name: "gateway-a",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gwFail.Call(context.Background(), other, "issues.list", json.RawMessage(`{}`))
	var ee *authz.EvidenceError
	if !errors.Is(err, pipeline.CodeChannelUnknown) || !errors.As(err, &ee) {
		t.Errorf("probe with a failing sink: %v, want %s and an EvidenceError", err, pipeline.CodeChannelUnknown)
	}
	// The zero Gateway has no sink: it refuses and records nothing.
	var zero gateway.Gateway
	if _, err := zero.Call(context.Background(), other, "issues.list", nil); !errors.Is(err, pipeline.CodeChannelUnknown) {
		t.Errorf("zero Gateway: %v", err)
	}
}
