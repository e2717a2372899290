package vercel_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

// TestDestroyRetriesAFailedStop: a Destroy whose stop of the session
// failed (the API could not be reached) returns the failure and leaves
// the session to be stopped by the next Destroy, not running at Vercel;
// once stopped, Destroy asks nothing.
func TestDestroyRetriesAFailedStop(t *testing.T) {
	f := newFakeVercel(t, canary, "team_1")
	edge := &vendortest.Edge{Keys: map[string]string{"lease:vercel": canary}}
	failing := &vendortest.FailOnce{Next: edge, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/stop")
	}}
	c, err := vercel.New(vercel.Config{Edge: failing, Credential: "lease:vercel", TeamID: "team_1", ProjectID: "prj_1", BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), vercel.SandboxSpec{ID: "inst-r", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	held := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		sess := f.sessions[s.SessionID()]
		return sess != nil && !sess.stopped
	}
	vendortest.CheckDestroyRetried(t, s.Destroy, edge, held)
}
