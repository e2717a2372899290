package vendorkit_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

func TestJSONBody(t *testing.T) {
	if r, err := vendorkit.JSONBody(nil); r != nil || err != nil {
		t.Errorf("JSONBody(nil) = %v, %v; want no body", r, err)
	}
	r, err := vendorkit.JSONBody(map[string]any{"a": []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r); string(b) != `{"a":["b"]}` {
		t.Errorf("JSONBody = %s", b)
	}
	if _, err := vendorkit.JSONBody(map[string]any{"f": func() {}}); err == nil {
		t.Error("JSONBody of a func encoded")
	}
}

// recordingEdge answers every request with status and body and records
// what it was asked to attach.
type recordingEdge struct {
	status                 int
	body                   string
	err                    error
	handle, header, prefix string
	closed                 bool
}

func (e *recordingEdge) Send(req *http.Request, handle, header, prefix string) (*http.Response, error) {
	e.handle, e.header, e.prefix = handle, header, prefix
	if e.err != nil {
		return nil, e.err
	}
	return &http.Response{StatusCode: e.status, Body: &closeRecorder{strings.NewReader(e.body), &e.closed}, Request: req}, nil
}

type closeRecorder struct {
	io.Reader
	closed *bool
}

func (c *closeRecorder) Close() error { *c.closed = true; return nil }

func TestExchange(t *testing.T) {
	c := vendorkit.Call{Vendor: "acme", Code: code, Method: "GET", Path: "/z"}
	req, err := http.NewRequest("GET", "https://api.example/z", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &recordingEdge{status: 200, body: "0123456789"}
	data, err := c.Exchange(e, req, "lease:acme", "Authorization", "Bearer ", 4, 200)
	if err != nil || string(data) != "01234" || !e.closed {
		t.Errorf("Exchange = %q, %v (body closed %v); want the first max+1 bytes and a closed body", data, err, e.closed)
	}
	if e.handle != "lease:acme" || e.header != "Authorization" || e.prefix != "Bearer " {
		t.Errorf("the edge was asked for %q in %q with prefix %q", e.handle, e.header, e.prefix)
	}
	e = &recordingEdge{status: 500, body: "secret"}
	if _, err := c.Exchange(e, req, "lease:acme", "X-API-Key", "", 1<<10, 200); !errors.Is(err, code) || strings.Contains(err.Error(), "secret") || !e.closed {
		t.Errorf("Exchange of a 500 = %v (body closed %v)", err, e.closed)
	}
	cause := errors.New("edge: no lease")
	e = &recordingEdge{err: cause}
	if _, err := c.Exchange(e, req, "lease:acme", "X-API-Key", "", 1<<10, 200); !errors.Is(err, code) || !errors.Is(err, cause) ||
		!strings.Contains(err.Error(), "acme: GET /z was not answered") {
		t.Errorf("Exchange the edge could not send = %v", err)
	}
}
