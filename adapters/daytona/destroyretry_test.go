package daytona_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu"
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

// failCleanup is an edge that fails every request for the toolbox
// proxy URL and the first DELETE, as a Daytona that cannot be reached
// fails them, and sends every other request through next.
type failCleanup struct {
	next    *vendortest.Edge
	mu      sync.Mutex
	deleted bool // the first DELETE was failed
}

func (f *failCleanup) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	f.mu.Lock()
	fail := strings.HasSuffix(req.URL.Path, "/toolbox-proxy-url") || req.Method == http.MethodDelete && !f.deleted
	if req.Method == http.MethodDelete {
		f.deleted = true
	}
	f.mu.Unlock()
	if fail {
		return nil, vendortest.ErrUnreachable
	}
	return f.next.Send(req, handle, header, prefix)
}

// TestCreateReportsASandboxItCouldNotRemove: a sandbox Create made and
// then gave up (its toolbox proxy URL could not be read) is deleted;
// when that deletion fails, Create returns why it gave up joined with
// the failure, naming the sandbox by Daytona's id, so the host can
// delete what runs on at Daytona. Before, the failure was dropped and
// nothing named the sandbox left there.
func TestCreateReportsASandboxItCouldNotRemove(t *testing.T) {
	f := newFakeDaytona(t, canary)
	edge := &failCleanup{next: &vendortest.Edge{Keys: map[string]string{"lease:daytona": canary}}}
	c, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: f.apiSrv.URL, Snapshot: "daytona-small"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: "inst-d", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if s != nil || err == nil {
		t.Fatalf("Create = %v, %v; want an error", s, err)
	}
	f.mu.Lock()
	var left []string
	for id := range f.sandboxes {
		left = append(left, id)
	}
	f.mu.Unlock()
	if len(left) != 1 {
		t.Fatalf("sandboxes left at Daytona: %q, want the one whose deletion failed", left)
	}
	if n := strings.Count(err.Error(), vendortest.ErrUnreachable.Error()); n != 2 || !strings.Contains(err.Error(), checkfu.Quote(left[0])) {
		t.Fatalf("Create's error %q does not hold both failures and name the sandbox left at Daytona (%q)", err, left[0])
	}
}
