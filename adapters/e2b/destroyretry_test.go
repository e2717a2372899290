package e2b_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestDestroyRetriesAFailedDeletion: a Destroy whose DELETE of the
// sandbox failed (the control plane could not be reached) returns the
// failure and leaves the sandbox to be deleted by the next Destroy, not
// running at E2B until its Timeout; once deleted, Destroy asks nothing.
func TestDestroyRetriesAFailedDeletion(t *testing.T) {
	f := newFakeE2B(t, canary)
	edge := &vendortest.Edge{Keys: map[string]string{"lease:e2b": canary}}
	failing := &vendortest.FailOnce{Next: edge, Match: func(r *http.Request) bool { return r.Method == http.MethodDelete }}
	c, err := e2b.New(e2b.Config{Edge: failing, Credential: "lease:e2b", Template: "base", BaseURL: f.srv.URL, Envd: f.envdURL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: "inst-r", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:profile"})
	if err != nil {
		t.Fatal(err)
	}
	held := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		_, ok := f.sandboxes[s.SandboxID()]
		return ok
	}
	vendortest.CheckDestroyRetried(t, s.Destroy, edge, held)
}
