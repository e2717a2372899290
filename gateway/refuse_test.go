package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestChannelRefuse: a refusal the broker decided is recorded as a
// refused decision with the channel's context and its code; over a
// closed channel it is the channel refusal, with no context.
func TestChannelRefuse(t *testing.T) {
	r := rigtest.New(t)
	ch := r.Channel(rigtest.Member())
	const code checkfu.Code = "frame_too_long"
	if err := ch.Refuse(context.Background(), checkfu.Refuse(code, "broker: too long")); !errors.Is(err, code) {
		t.Fatalf("Refuse = %v, want %s", err, code)
	}
	evs := r.Evidence.Events()
	if len(evs) != 1 || evs[0].Kind != authz.EvidenceGatewayDecision || evs[0].Outcome != authz.OutcomeRefused || evs[0].Code != code || evs[0].Request != rigtest.Member() || evs[0].Capability != "" {
		t.Fatalf("recorded %+v", evs)
	}
	ch.Close()
	if err := ch.Refuse(context.Background(), checkfu.Refuse(code, "broker: too long")); !errors.Is(err, pipeline.CodeChannelUnknown) {
		t.Fatalf("Refuse on a closed channel = %v, want %s", err, pipeline.CodeChannelUnknown)
	}
	evs = r.Evidence.Events()
	if len(evs) != 2 || evs[1].Code != pipeline.CodeChannelUnknown || evs[1].Request != (checkfu.RequestContext{}) {
		t.Fatalf("recorded %+v", evs[1:])
	}
}
