package vercel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

// hostileVercel is a Vercel API on loopback that creates session s1 and
// answers the command with cmd, written by the test.
func hostileVercel(t *testing.T, cmd http.HandlerFunc) *vercel.Sandbox {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v3/sandboxes":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"session":{"id":"s1"}}`))
		case r.Method == http.MethodPost && r.URL.Path == "/v2/sandboxes/sessions/s1/cmd":
			cmd(w, r)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := vercel.New(vercel.Config{Edge: &vendortest.Edge{Keys: map[string]string{"lease:vercel": canary}}, Credential: "lease:vercel", TeamID: "team_1", ProjectID: "prj_1", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), vercel.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Destroy(context.Background()) })
	return s
}

// TestExitCodeIsQuoted: the final line's exit code is the vendor's
// text; one that is not a status reaches Wait's error quoted and cut,
// never raw (terminal control, or a megabyte of it).
func TestExitCodeIsQuoted(t *testing.T) {
	hostile := `"\u001b]0;owned\u0007\u001b[2J` + strings.Repeat("x", 4000) + `"`
	s := hostileVercel(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write([]byte(`{"command":{"id":"c1"}}` + "\n" + `{"command":{"id":"c1","exitCode":` + hostile + `}}` + "\n"))
	})
	p, err := s.OpenProcess(context.Background(), vercel.Command{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, p.Stdout()) }()
	go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
	status, err := p.Wait()
	if status != -1 || !errors.Is(err, vercel.CodeCommandStreamInvalid) {
		t.Fatalf("Wait = %d, %v; want -1, command_stream_invalid", status, err)
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x07") || len(msg) > 200+checkfu.MaxQuoted {
		t.Errorf("Wait's error shows the vendor's exit code raw (%d bytes): %q", len(msg), msg[:min(len(msg), 120)])
	}
}

// TestOpenProcessHonoursItsContext: a vendor that answers the command
// with the stream's headers and then sends nothing holds OpenProcess
// only until its context ends.
func TestOpenProcessHonoursItsContext(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	s := hostileVercel(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.OpenProcess(ctx, vercel.Command{Argv: []string{"true"}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("OpenProcess = %v, want its context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenProcess still waits for the stream's first line 10 s after its context ended")
	}
	// The sandbox is free again: the open that failed holds no slot.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	if _, err := s.OpenProcess(ctx2, vercel.Command{Argv: []string{"true"}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second OpenProcess = %v, want its context's deadline (not process_already_open)", err)
	}
}
