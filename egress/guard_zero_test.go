package egress_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// TestZeroGuardRefuses: a Guard not built by NewGuard serves nothing and
// forwards nothing; it refuses instead of panicking.
func TestZeroGuardRefuses(t *testing.T) {
	var g egress.Guard
	if err := g.Serve(); !errors.Is(err, egress.CodePolicyInvalid) {
		t.Errorf("zero Guard Serve = %v, want %s", err, egress.CodePolicyInvalid)
	}
	if a := g.Addr(); a != nil {
		t.Errorf("zero Guard Addr = %v, want nil", a)
	}
	var nilPolicy *egress.CompiledPolicy
	if err := nilPolicy.Permits("example.com", 443); !errors.Is(err, egress.CodeEgressDisabled) {
		t.Errorf("nil CompiledPolicy Permits = %v, want %s", err, egress.CodeEgressDisabled)
	}
	if err := g.Shutdown(context.Background()); err != nil {
		t.Errorf("zero Guard Shutdown = %v", err)
	}
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "http://example.com/", nil),
		httptest.NewRequest(http.MethodConnect, "example.com:443", nil),
	} {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || w.Header().Get(egress.RefusalHeader) != string(egress.CodePolicyInvalid) {
			t.Errorf("zero Guard %s: %d %q, want 403 %s", r.Method, w.Code, w.Header().Get(egress.RefusalHeader), egress.CodePolicyInvalid)
		}
	}
}
