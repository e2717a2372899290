package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestRefusedByRulesSpendsNoBudget: a registration whose resource the
// Connection's rules do not allow is refused before the lease is spent,
// on every attempt; an allowed call spends it (so the measure can move).
func TestRefusedByRulesSpendsNoBudget(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("outside.rules")
	r.Grant("issues.list")
	ch := r.Channel(rigtest.Member())
	remaining := func() int64 {
		t.Helper()
		n, err := r.Leases.Remaining(r.Lease.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := remaining()
	for range 3 {
		if _, err := ch.Call(context.Background(), "outside.rules", json.RawMessage(`{}`)); !errors.Is(err, egress.CodeNoRuleMatched) {
			t.Fatalf("call outside the rules: %v, want %s", err, egress.CodeNoRuleMatched)
		}
	}
	if after := remaining(); after != before {
		t.Errorf("three calls the rules refuse spent %d of the lease's budget", before-after)
	}
	if r.Hits.Load() != 0 || r.Opens.Load() != 0 {
		t.Errorf("a call the rules refuse reached the provider (%d) or the credential (%d)", r.Hits.Load(), r.Opens.Load())
	}
	decisions, results := gatewayEvents(r)
	if len(decisions) != 3 || len(results) != 0 || decisions[0].Outcome != authz.OutcomeRefused || decisions[0].Grant != "" {
		t.Errorf("decisions %+v results %+v: want three refusals naming no lease", decisions, results)
	}
	if _, err := ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if after := remaining(); after >= before {
		t.Errorf("an allowed call left the budget at %d (was %d)", after, before)
	}
}
