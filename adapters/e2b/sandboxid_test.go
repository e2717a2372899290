package e2b_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestCreateRefusesADottedSandboxID: the sandbox ID becomes a DNS label
// of envd's host (49983-<id>.<domain>), so an ID with a dot, which the
// other vendors' names may hold, would move envd's traffic to another
// host. The control plane here is a mock that answers with one.
func TestCreateRefusesADottedSandboxID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"templateID":"base","sandboxID":"sbx.attacker.example","clientID":"c","envdVersion":"0.1.0","envdAccessToken":"t"}`))
	}))
	defer srv.Close()
	c, err := e2b.New(e2b.Config{Edge: &vendortest.Edge{Keys: map[string]string{"lease:e2b": canary}}, Credential: "lease:e2b", Template: "base", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: "inst-1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:profile"})
	if s != nil || !errors.Is(err, e2b.CodeControlPlaneRefused) {
		t.Fatalf("Create with sandbox ID %q = %v, %v; want a %s refusal", "sbx.attacker.example", s, err, e2b.CodeControlPlaneRefused)
	}
}
