package e2b_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// envd runs inside the sandbox, where the workload may use sudo: a
// hostile workload can replace it and answer the adapter's envd
// requests itself. These tests play that envd on loopback.

// hostileEnvd is a control plane that creates sandbox sbx1 (and
// records what it was asked) and an envd whose handler the test writes.
type hostileEnvd struct {
	cp, envd *httptest.Server
	mu       sync.Mutex
	asked    []string
}

func newHostileEnvd(t *testing.T, envd http.HandlerFunc) (*hostileEnvd, *e2b.Sandbox) {
	t.Helper()
	h := &hostileEnvd{}
	h.cp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.asked = append(h.asked, r.Method+" "+r.URL.Path)
		h.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/sandboxes":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"templateID":"base","sandboxID":"sbx1","clientID":"c","envdVersion":"0.1.0","envdAccessToken":"envd-token-5c1"}`))
		case r.Method == http.MethodDelete && r.URL.Path == "/sandboxes/sbx1":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(h.cp.Close)
	h.envd = httptest.NewServer(envd)
	t.Cleanup(h.envd.Close)
	c, err := e2b.New(e2b.Config{Edge: &vendortest.Edge{Keys: map[string]string{"lease:e2b": canary}}, Credential: "lease:e2b", Template: "base", BaseURL: h.cp.URL,
		Envd: func(string, string) string { return h.envd.URL }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: "inst-1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:profile"})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func frame(flags byte, msg string) []byte {
	b := make([]byte, 5, 5+len(msg))
	b[0] = flags
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// startStream answers Start with the given events, then end of stream.
func startStream(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/process.Process/Start" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/connect+json")
		var b bytes.Buffer
		for _, e := range events {
			b.Write(frame(0, e))
		}
		b.Write(frame(0x02, `{}`))
		_, _ = w.Write(b.Bytes())
	}
}

// TestExitStatusOutOfRange: the contract's exit status is a code
// (0-255) or 128+signal; an envd reporting anything else is refused,
// never passed on as the process's status.
func TestExitStatusOutOfRange(t *testing.T) {
	for _, end := range []string{
		`{"exitCode":-1,"exited":true,"status":"exit status -1"}`,
		`{"exitCode":256,"exited":true,"status":"exit status 256"}`,
		`{"exitCode":2147483647,"exited":true,"status":"x"}`,
		`{"exitCode":-2147483648,"exited":true,"status":"x"}`,
		`{"exitCode":4096,"exited":false,"status":"x"}`,
	} {
		_, s := newHostileEnvd(t, startStream(`{"event":{"start":{"pid":7}}}`, `{"event":{"end":`+end+`}}`))
		p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, p.Stdout()) }()
		go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
		status, err := p.Wait()
		if status != -1 || !errors.Is(err, e2b.CodeEnvdStreamInvalid) {
			t.Errorf("end %s: Wait = %d, %v; want -1 and envd_stream_invalid", end, status, err)
		}
		_ = s.Destroy(context.Background())
	}
	// The edges that are statuses: 0, 255, and 128+signal.
	for end, want := range map[string]int{
		`{"exitCode":0,"exited":true,"status":"exit status 0"}`:     0,
		`{"exitCode":255,"exited":true,"status":"exit status 255"}`: 255,
		`{"exitCode":-1,"exited":false,"status":"signal: killed"}`:  137,
	} {
		_, s := newHostileEnvd(t, startStream(`{"event":{"start":{"pid":7}}}`, `{"event":{"end":`+end+`}}`))
		p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, p.Stdout()) }()
		go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
		if status, err := p.Wait(); status != want || err != nil {
			t.Errorf("end %s: Wait = %d, %v; want %d", end, status, err, want)
		}
		_ = s.Destroy(context.Background())
	}
}

// TestEnvdRedirectIsNotFollowed: an envd answering with a redirect
// would have the Runner send the sandbox's envd token (and the request)
// to any host it names, the Runner's own loopback included. The
// redirect is refused and nothing reaches the host it names.
func TestEnvdRedirectIsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var got []string
	stranger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" token="+r.Header.Get("X-Access-Token"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer stranger.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		_, s := newHostileEnvd(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, stranger.URL+"/admin", code)
		})
		_, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}})
		if !errors.Is(err, e2b.CodeEnvdRefused) {
			t.Errorf("a %d from envd: OpenProcess = %v, want envd_refused", code, err)
		}
		_ = s.Destroy(context.Background())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("envd's redirect was followed to another host: %q", got)
	}
}

// TestKillIsBounded: an envd that answers SendSignal's headers and then
// holds the body holds Kill at most vendorkit.ControlTimeout, and with
// it Destroy, which still deletes the sandbox.
func TestKillIsBounded(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	h, s := newHostileEnvd(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/process.Process/Start":
			w.Header().Set("Content-Type", "application/connect+json")
			_, _ = w.Write(frame(0, `{"event":{"start":{"pid":7}}}`))
			w.(http.Flusher).Flush()
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	})
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	vendortest.DestroyHeld(t, "envd's Kill", s.Destroy)
	h.mu.Lock()
	asked := strings.Join(h.asked, ", ")
	h.mu.Unlock()
	if !strings.HasSuffix(asked, "DELETE /sandboxes/sbx1") {
		t.Errorf("the control plane was asked %s; want the sandbox deleted", asked)
	}
	_ = p
}
