package egress

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestNewClientProperties inspects what NewClient builds: no proxy, a
// redirect policy that never follows, and the guarded dialer. (The
// behavioural tests cover the same ground; this one does not depend on
// net/http's once-per-process caching of the proxy environment.)
func TestNewClientProperties(t *testing.T) {
	rules, err := NewRules([]Rule{{Host: "api.example.com", Port: 443, Methods: []string{"GET"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ClientConfig{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := c.hc.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", c.hc.Transport)
	}
	if tr.Proxy != nil {
		t.Errorf("transport has a Proxy function")
	}
	// The deprecated Dial and DialTLS hooks would bypass the guarded
	// DialContext if set, so the test checks they are not.
	//lint:ignore SA1019 checking that the deprecated hooks are unset is the point
	if tr.DialContext == nil || tr.Dial != nil || tr.DialTLSContext != nil || tr.DialTLS != nil {
		t.Errorf("transport dial hooks are not exactly the guarded DialContext")
	}
	if c.hc.CheckRedirect == nil || !errors.Is(c.hc.CheckRedirect(nil, nil), http.ErrUseLastResponse) {
		t.Errorf("CheckRedirect does not stop at the first response")
	}
}

// A recordingConn answers one HTTP/1.1 request in memory and records the
// Host it was sent.
type recorder struct {
	mu     sync.Mutex
	dialed []string
	hosts  []string
}

func (rec *recorder) dial(_ context.Context, _, address string) (net.Conn, error) {
	rec.mu.Lock()
	rec.dialed = append(rec.dialed, address)
	rec.mu.Unlock()
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		r, err := http.ReadRequest(bufio.NewReader(server))
		if err != nil {
			return
		}
		rec.mu.Lock()
		rec.hosts = append(rec.hosts, r.Host)
		rec.mu.Unlock()
		server.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	}()
	return client, nil
}

// FuzzClientHostInvariant drives the canonicaliser through the whole
// client with a recording dialer, and checks the invariant: the host
// matched is the host dialled is the Host sent. A refused request dials
// nothing.
func FuzzClientHostInvariant(f *testing.F) {
	for _, s := range [][2]string{
		{"http://api.example.com/v1/x", ""},
		{"http://API.EXAMPLE.COM./v1/x", ""},
		{"http://api.example.com:80/v1/x", "api.example.com"},
		{"http://api.example.com:8080/v1/x", "api.example.com:8080"},
		{"http://a.example.org:8080/", ""},
		{"http://a.example.org/", "b.example.org"},
		{"http://ＡＰＩ.example.com/v1", ""},
		{"http://api.example.com%2F@evil.example/v1", ""},
		{"http://127.0.0.1/v1", ""},
		{"http://①②⑦.0.0.1/", ""},
		{"http://[::1]:80/", ""},
		{"http://api.example.com/v1/../admin", ""},
		{"http://xn--bcher-kva.example.com/v1", "bücher.example.com"},
	} {
		f.Add(s[0], s[1])
	}
	rules, err := NewRules([]Rule{
		{Host: "api.example.com", Port: 80, PathPrefix: "/v1", Methods: []string{"GET"}},
		{Host: "api.example.com", Port: 8080, Methods: []string{"GET"}},
		{Host: "*.example.org", Port: 8080, Methods: []string{"GET"}},
		{Host: "*.example.org", Port: 80, Methods: []string{"GET"}},
		{Host: "xn--bcher-kva.example.com", Port: 80, Methods: []string{"GET"}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rawURL, host string) {
		req, err := http.NewRequest("GET", rawURL, nil)
		if err != nil {
			return
		}
		if host != "" {
			req.Host = host
		}
		rec := &recorder{}
		c, err := NewClient(ClientConfig{Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		c.dial = rec.dial
		defer c.CloseIdleConnections()
		resp, err := c.Do(req, nil)
		if resp != nil {
			resp.Body.Close()
		}
		creq, cerr := CanonicalRequest(req)
		decided := cerr == nil
		if decided {
			_, derr := rules.Decide(&creq)
			decided = derr == nil
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !decided {
			if len(rec.dialed) != 0 {
				t.Fatalf("refused request %q (Host %q) dialled %v", rawURL, host, rec.dialed)
			}
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("refused request %q: error %v is not a refusal", rawURL, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("allowed request %q failed: %v", rawURL, err)
		}
		if len(rec.dialed) != 1 || rec.dialed[0] != creq.Authority() {
			t.Fatalf("matched %q, dialled %v", creq.Authority(), rec.dialed)
		}
		if len(rec.hosts) != 1 || rec.hosts[0] != creq.URL().Host {
			t.Fatalf("matched %q, sent Host %v", creq.URL().Host, rec.hosts)
		}
		if h, _, _ := net.SplitHostPort(rec.dialed[0]); h != creq.Host {
			t.Fatalf("matched host %q, dialled host %q", creq.Host, h)
		}
	})
}
