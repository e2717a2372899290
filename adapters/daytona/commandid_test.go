package daytona_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// scriptedEdge answers each request itself, from answers by method and
// path suffix, and records the paths it was asked for; nothing reaches a
// network.
type scriptedEdge struct {
	answers map[string]any // "METHOD suffix" -> JSON answer (200)

	mu    sync.Mutex
	asked []string
	hosts []string // the host of each request, in order
}

func (e *scriptedEdge) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Method+" "+req.URL.EscapedPath())
	e.hosts = append(e.hosts, req.URL.Host)
	e.mu.Unlock()
	for k, v := range e.answers {
		method, suffix, _ := strings.Cut(k, " ")
		if req.Method == method && strings.HasSuffix(req.URL.EscapedPath(), suffix) {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(string(b))), Request: req}, nil
		}
	}
	return &http.Response{StatusCode: http.StatusNotFound, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// TestCommandIDIsAVendorID checks that a toolbox answering exec with a
// command ID that holds terminal control, or is longer than a vendor's
// name may be, is refused at once: the ID is spliced into every later
// request's path, which comes back decoded in those requests' errors.
// The log is never asked for.
func TestCommandIDIsAVendorID(t *testing.T) {
	for _, id := range []string{"cmd\x1b]0;owned\x07\x1b[2J", "cmd\u202e1", strings.Repeat("c", 129)} {
		edge := &scriptedEdge{answers: map[string]any{
			"POST /sandbox":         map[string]any{"id": "sb1", "state": "started", "toolboxProxyUrl": "https://toolbox.example"},
			"POST /process/session": map[string]any{},
			"POST /exec":            map[string]any{"cmdId": id},
		}}
		c, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: "https://api.example"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.OpenProcess(context.Background(), daytona.Command{Argv: []string{"true"}})
		if !errors.Is(err, daytona.CodeToolboxRefused) || strings.ContainsAny(err.Error(), "\x1b\x07\u202e") {
			t.Errorf("exec answering command id %q: OpenProcess = %v, want toolbox_refused, quoted", id, err)
		}
		for _, p := range edge.asked {
			if strings.Contains(p, "/logs") {
				t.Errorf("command id %q: the log was asked for (%s)", id, p)
			}
		}
		_ = s.Destroy(context.Background())
	}
}
