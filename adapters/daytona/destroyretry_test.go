package daytona_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestDestroyRetriesAFailedDeletion: a Destroy whose DELETE of the
// sandbox failed (the API could not be reached) returns the failure and
// leaves the sandbox to be deleted by the next Destroy, not running at
// Daytona; once deleted, Destroy asks nothing.
func TestDestroyRetriesAFailedDeletion(t *testing.T) {
	f := newFakeDaytona(t, canary)
	edge := &vendortest.Edge{Keys: map[string]string{"lease:daytona": canary}}
	failing := &vendortest.FailOnce{Next: edge, Match: func(r *http.Request) bool { return r.Method == http.MethodDelete }}
	c, err := daytona.New(daytona.Config{Edge: failing, Credential: "lease:daytona", BaseURL: f.apiSrv.URL, Snapshot: "daytona-small"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: "inst-r", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
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
