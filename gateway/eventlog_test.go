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
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestEventsInTheSessionLog records an allowed and a denied call through
// evidencelog into a session log: three events (the allowed call's
// decision and result, the denied call's denial), each with the whole of
// the channel's context (all nine fields) and the authority decision;
// none carries the credential.
func TestEventsInTheSessionLog(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	rc := rigtest.Member()
	l, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := evidencelog.New(l, rc.Session)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{
		Authenticator: r.Tokens, Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Approvals: r.Approvals, Edge: r.Edge, Evidence: sink, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.Clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := r.Tokens.Issue(rc, time.Minute)
	ch, err := gw.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ch.Call(ctx, "issues.list", json.RawMessage(`{"state":"open"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Call(ctx, "issues.create", json.RawMessage(`{"title":"x"}`)); !errors.Is(err, authz.CodePermissionMissing) {
		t.Fatalf("denied call: %v", err)
	}
	var got []string
	for e, err := range l.Read(ctx, rc.Session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if c := contextOf(e.Event); c != rc {
			t.Errorf("event %d carries the context %+v, want %+v", e.Seq, c, rc)
		}
		b, _ := json.Marshal(e)
		noLeak(t, "a logged event", b)
		got = append(got, fmt.Sprintf("%d %s %s %s %s %s", e.Seq, e.Kind, e.Decision, e.Code, e.Result, e.EffectID))
	}
	want := []string{
		"1 tool_call allow  authorized issues.list",
		"2 tool_call none  http_200 issues.list",
		"3 denial deny permission_missing refused ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}
