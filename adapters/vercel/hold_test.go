package vercel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

// TestKillIsBounded: a vendor that never answers the kill holds Kill at
// most vendorkit.ControlTimeout, and with it Destroy, which still stops
// the session.
func TestKillIsBounded(t *testing.T) {
	stopped := make(chan struct{}, 1)
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/sandboxes":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"session":{"id":"s1"}}`))
		case "/v2/sandboxes/sessions/s1/cmd":
			w.Header().Set("Content-Type", "application/x-ndjson")
			_, _ = w.Write([]byte(`{"command":{"id":"c1"}}` + "\n"))
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		case "/v2/sandboxes/sessions/s1/cmd/c1/kill":
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		case "/v2/sandboxes/sessions/s1/stop":
			stopped <- struct{}{}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	defer close(hold) // before srv.Close, which waits for the held handlers
	c, err := vercel.New(vercel.Config{Edge: &vendortest.Edge{Keys: map[string]string{"lease:vercel": canary}}, Credential: "lease:vercel", TeamID: "team_1", ProjectID: "prj_1", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), vercel.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.OpenProcess(context.Background(), vercel.Command{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stdout()) }()
	go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
	vendortest.DestroyHeld(t, "the kill", s.Destroy)
	select {
	case <-stopped:
	default:
		t.Error("Destroy did not stop the session")
	}
}
