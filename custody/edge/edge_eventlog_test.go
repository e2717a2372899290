package edge_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
)

// TestEdgeWithEventlogEvidence runs an Edge whose evidence sink is the
// session's event log, as a platform wires it: a sent call and a refused
// call each leave one tool_call event, and the sent call's response is
// returned. (Until evidencelog mapped edge calls, its sink refused them,
// and an Edge wired this way withheld every response.)
func TestEdgeWithEventlogEvidence(t *testing.T) {
	rig := newEdgeRig(t)
	log, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := evidencelog.New(log, "session-1")
	if err != nil {
		t.Fatal(err)
	}
	ed, err := edge.NewEdge(edge.EdgeConfig{
		Leases: rig.leases, Custodian: rig.custodian,
		Evidence: sink, Label: checkfu.LabelIsolated, Now: rig.clock.Now,
		Dialer: rig.dialer, RootCAs: rig.roots,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.CloseIdleConnections)
	ctx := context.Background()

	resp, err := rig.via(ed).Call(ctx, rig.list())
	if err != nil || resp.Status != 200 {
		t.Fatalf("list call = %v, %v; want a 200 response", resp, err)
	}
	outside := rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`)
	if _, err := ed.Send(ctx, rig.authorized(outside)); err == nil {
		t.Fatal("a call outside the Connection's rules was not refused")
	}

	var got []string
	for e, err := range log.Read(ctx, "session-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s", e.Kind, e.Label, e.Decision, e.Result, e.Code, e.Tool.Name, e.EffectID))
	}
	want := []string{
		"tool_call isolated allow http_200  list_issues issues.list",
		"tool_call isolated deny refused no_rule_matched outside outside.rules",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("session events:\n got %q\nwant %q", got, want)
	}
}
