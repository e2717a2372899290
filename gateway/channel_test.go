package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestEveryEventNamesItsChannel: two channels of one gateway, under one
// request context and one lease, have distinct IDs, and every event of a
// call over one of them names it: the decision and the result of an
// allowed call, the refused decision of a call no assignment allows, a
// refusal the broker decided (Channel.Refuse), and the hops of an
// approved call (the edge_call and the approval_result), so a reader
// tells the two channels' calls apart by name alone. The approver's
// decision came over no channel and names none; so does a call over a
// closed channel, which nothing about is trusted.
func TestEveryEventNamesItsChannel(t *testing.T) {
	ctx := context.Background()
	r := rigtest.New(t)
	r.Grant("issues.list")
	r.Grant("issues.create")
	ch1, ch2 := r.Channel(rigtest.Member()), r.Channel(rigtest.Member())
	for _, id := range []string{ch1.ID(), ch2.ID()} {
		if !strings.HasPrefix(id, "ch-") || len(id) != len("ch-")+24 {
			t.Fatalf("channel ID %q, want ch- and 24 hex digits", id)
		}
	}
	if ch1.ID() == ch2.ID() {
		t.Fatalf("two channels share the ID %q", ch1.ID())
	}

	// Over the first channel: an allowed read, an approved effect, a
	// call no assignment allows, a refusal the broker decided.
	if _, err := ch1.Call(ctx, "issues.list", json.RawMessage(`{"state":"open"}`)); err != nil {
		t.Fatal(err)
	}
	args := `{"title":"bug"}`
	r.Approve(args)
	if resp, err := ch1.Call(ctx, "issues.create", json.RawMessage(args)); err != nil || resp.Status != 200 {
		t.Fatalf("approved call: %v", err)
	}
	if _, err := ch1.Call(ctx, "issues.delete", json.RawMessage(`{}`)); err == nil {
		t.Fatal("a call no assignment allows went through")
	}
	if err := ch1.Refuse(ctx, checkfu.Refuse("frame_too_long", "broker: too long")); err == nil {
		t.Fatal("Refuse returned nil")
	}
	first, firstEdge := len(r.Evidence.Events()), len(r.EdgeEvidence.Events())
	// Over the second: an allowed read.
	if _, err := ch2.Call(ctx, "issues.list", json.RawMessage(`{"state":"open"}`)); err != nil {
		t.Fatal(err)
	}

	check := func(what string, evs []authz.Evidence, split int) {
		t.Helper()
		if split == 0 || split == len(evs) {
			t.Fatalf("%s: %d events, %d of the first channel: want both channels' events", what, len(evs), split)
		}
		for i, ev := range evs {
			want := ch1.ID()
			if i >= split {
				want = ch2.ID()
			}
			if ev.Kind == authz.EvidenceApprovalDecision {
				want = "" // the approver's, over no channel
			}
			if ev.Channel != want {
				t.Errorf("%s %d (%s %s %s) names channel %q, want %q", what, i, ev.Kind, ev.Outcome, ev.Code, ev.Channel, want)
			}
		}
	}
	evs := r.Evidence.Events()
	kinds := map[authz.EvidenceKind]int{}
	for _, ev := range evs[:first] {
		kinds[ev.Kind]++
	}
	if kinds[authz.EvidenceGatewayDecision] != 4 || kinds[authz.EvidenceGatewayResult] != 2 || kinds[authz.EvidenceApprovalResult] != 1 || kinds[authz.EvidenceApprovalDecision] != 1 {
		t.Fatalf("the first channel's events by kind: %v", kinds)
	}
	check("event", evs, first)
	check("edge event", r.EdgeEvidence.Events(), firstEdge)

	// A call over the closed first channel is refused and names nothing.
	ch1.Close()
	if _, err := ch1.Call(ctx, "issues.list", json.RawMessage(`{}`)); !errors.Is(err, pipeline.CodeChannelUnknown) {
		t.Fatalf("call over a closed channel: %v", err)
	}
	evs = r.Evidence.Events()
	if last := evs[len(evs)-1]; last.Code != pipeline.CodeChannelUnknown || last.Channel != "" || last.Request != (checkfu.RequestContext{}) {
		t.Errorf("the closed channel's refusal %+v", last)
	}
}
