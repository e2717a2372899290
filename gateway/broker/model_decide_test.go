package broker_test

import (
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
	"github.com/checkfu/checkfu/internal/ruleprobe"
)

// TestModelCallDecidesItsRequestOnce: the Connection's egress rules
// decide a model call's request once, in the pipeline, whether the call
// is then sent (the edge's egress client sends what they allowed) or
// refused at the budget; a call refused before the rules' step (its
// model) is not decided at all.
func TestModelCallDecidesItsRequestOnce(t *testing.T) {
	_, c := modelBroker(t, rigtest.ModelCapability)
	decisions := func(body string) (int, string, int64) {
		t.Helper()
		n, stop := ruleprobe.Count("model.example.com")
		defer stop()
		status, got := post(t, c, "POST", "/v1/messages", body)
		return status, got, n()
	}
	for i := range rigtest.ModelRequests {
		status, body, n := decisions(allowed)
		if status != 200 || !strings.Contains(body, "event: message_stop") {
			t.Fatalf("call %d: %d %q", i+1, status, body)
		}
		if n != 1 {
			t.Errorf("call %d, sent: %d rule decisions, want 1", i+1, n)
		}
	}
	if status, body, n := decisions(`{"model":"claude-opus-4","stream":true}`); status != 403 || !strings.Contains(body, "model_not_allowed") || n != 0 {
		t.Errorf("a model not allowed: %d %q after %d rule decisions, want 403 and none", status, body, n)
	}
	if status, body, n := decisions(allowed); status != 403 || !strings.Contains(body, "model_budget_exhausted") || n != 1 {
		t.Errorf("over the budget: %d %q after %d rule decisions, want 403 and 1", status, body, n)
	}
}
