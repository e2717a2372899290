package vendorkit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// endless is a body that never ends.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func (*endless) Close() error { return nil }

type endlessEdge struct{ body *endless }

func (e endlessEdge) Send(req *http.Request, _, _, _ string) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: e.body, Request: req}, nil
}

// TestExchangeReadsAnEndlessBodyBounded: a vendor whose answer never
// ends is read to the bound plus one byte (a little more, in the
// reader's chunks), not for ever.
func TestExchangeReadsAnEndlessBodyBounded(t *testing.T) {
	c := vendorkit.Call{Vendor: "acme", Code: code, Method: "GET", Path: "/z"}
	req, err := http.NewRequest("GET", "https://api.example/z", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := &endless{}
	data, err := c.Exchange(endlessEdge{body}, req, "lease:acme", "Authorization", "Bearer ", 1<<20, 200)
	if err != nil || len(data) != 1<<20+1 || body.n > 1<<21 {
		t.Errorf("Exchange of an endless body = %d bytes, %v, having read %d; want the bound plus one", len(data), err, body.n)
	}
}

// TestExchangeFollowsNoRedirect: a vendor answering with a redirect to
// another host gets a refusal, and the other host is never asked (with
// the key or without), when the Edge sends as the Edge contract says:
// one request, its answer handed back. (The Edge is the Runner's:
// net/http's Client would follow the redirect and copy a custom header
// such as E2B's X-API-Key to any host; custody/edge follows none.)
func TestExchangeFollowsNoRedirect(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-API-Key"))
		mu.Unlock()
	}))
	defer other.Close()
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer vendor.Close()
	edge := &vendortest.Edge{Keys: map[string]string{"lease:acme": "CANARY-acme-key"}}
	for _, method := range []string{"GET", "POST"} {
		req, err := http.NewRequest(method, vendor.URL+"/z", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		c := vendorkit.Call{Vendor: "acme", Code: code, Method: method, Path: "/z"}
		if _, err := c.Exchange(edge, req, "lease:acme", "X-API-Key", "", 1<<10, 200); !errors.Is(err, code) || !strings.Contains(err.Error(), "answered 307") {
			t.Errorf("%s answered with a redirect: Exchange = %v, want a refusal of the 307", method, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) > 0 {
		t.Errorf("the redirect was followed: %q", asked)
	}
}
