package daytona_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// holdingEdge sends through the test's Edge, but holds every request
// whose method and path match hold until its context ends, as a daemon
// that never answers would.
type holdingEdge struct {
	*vendortest.Edge
	hold func(*http.Request) bool
}

func (e holdingEdge) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	if e.hold(req) {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return e.Edge.Send(req, handle, header, prefix)
}

// TestKillIsBounded: the toolbox's daemon runs in the sandbox, where the
// workload may answer for it. One that never answers the session's
// deletion holds Kill at most vendorkit.ControlTimeout, and with it
// Destroy, which still deletes the sandbox.
func TestKillIsBounded(t *testing.T) {
	f := newFakeDaytona(t, canary)
	t.Cleanup(f.close)
	edge := holdingEdge{&vendortest.Edge{Keys: map[string]string{"lease:daytona": canary}}, func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/process/session/")
	}}
	c, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: f.apiSrv.URL, Snapshot: "daytona-small"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	p := open(t, s, "sleep", "1000")
	vendortest.DestroyHeld(t, "the session's deletion", s.Destroy)
	f.mu.Lock()
	left := len(f.sandboxes)
	f.mu.Unlock()
	if left != 0 {
		t.Errorf("%d sandboxes left after Destroy", left)
	}
	_ = p
}

// answeringEdge sends through the test's Edge, but answers every request
// answer matches itself, with status 200 and body.
type answeringEdge struct {
	*vendortest.Edge
	answer func(*http.Request) bool
	body   string
}

func (e answeringEdge) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	if e.answer(req) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(e.body)), Request: req}, nil
	}
	return e.Edge.Send(req, handle, header, prefix)
}

// TestExitCodeOutOfRange: the daemon's exit code is the workload's word;
// one outside 0-255 or not an integer is refused, quoted, never passed on.
func TestExitCodeOutOfRange(t *testing.T) {
	for _, code := range []string{"256", "-1", "1e2", "99999999999999999999", "1.0", `"0"`} {
		f := newFakeDaytona(t, canary)
		edge := answeringEdge{&vendortest.Edge{Keys: map[string]string{"lease:daytona": canary}}, func(r *http.Request) bool {
			i := strings.LastIndex(r.URL.Path, "/command/")
			return r.Method == http.MethodGet && i >= 0 && !strings.Contains(r.URL.Path[i+len("/command/"):], "/")
		}, `{"id":"c","command":"x","exitCode":` + code + `}`}
		c, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: f.apiSrv.URL, Snapshot: "daytona-small"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
		if err != nil {
			t.Fatal(err)
		}
		r := collect(t, open(t, s, "true"), "")
		if r.status != -1 || !errors.Is(r.err, daytona.CodeToolboxRefused) {
			t.Errorf("exit code %s: Wait = %d, %v; want -1, toolbox_refused", code, r.status, r.err)
		}
		_ = s.Destroy(context.Background())
		f.close()
	}
}
