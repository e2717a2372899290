package egress

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzGuardHostInvariant feeds absolute-form request lines to the guard,
// parsed exactly as its server parses them, with a recording dialer, and
// checks the invariant: the host matched is the host dialled is the Host
// sent. A refused request dials nothing.
func FuzzGuardHostInvariant(f *testing.F) {
	for _, s := range [][2]string{
		{"http://api.example.com/v1", "api.example.com"},
		{"http://API.example.com.:80/x", "other.example.com"},
		{"http://api.example.com:8080/", "api.example.com:8080"},
		{"http://a.example.org/", ""},
		{"http://127.0.0.1/", ""},
		{"http://[::1]:8080/", ""},
		{"http://①②⑦.0.0.1/", ""},
		{"http://api.example.com%2F@evil.example/", ""},
		{"http://user:pw@api.example.com/", ""},
		{"http://ａｐｉ.example.com/", ""},
		{"https://api.example.com/", ""},
		{"/relative", "api.example.com"},
	} {
		f.Add(s[0], s[1])
	}
	p, err := ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com:80","api.example.com:8080","a.example.org:80"]}`))
	if err != nil {
		f.Fatal(err)
	}
	cp, err := p.Compile(nil)
	if err != nil {
		f.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer ln.Close()
	g, err := NewGuard(GuardConfig{Policy: cp, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target, host string) {
		if strings.ContainsAny(target+host, "\r\n \t") {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")))
		if err != nil {
			return
		}
		rec := &recorder{}
		g.dial = rec.dial
		g.pool.closeAll()
		g.pool = upstreamPool{}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)

		rec.mu.Lock()
		defer rec.mu.Unlock()
		if w.Code != http.StatusOK {
			if len(rec.dialed) != 0 {
				t.Fatalf("%q (Host %q) answered %d but dialled %v", target, host, w.Code, rec.dialed)
			}
			if w.Header().Get(RefusalHeader) == "" {
				t.Fatalf("%q answered %d without a refusal code", target, w.Code)
			}
			return
		}
		canon, err := canonicalTarget("http", req.URL.Host)
		if err != nil {
			t.Fatalf("%q allowed but its authority does not canonicalise: %v", target, err)
		}
		if err := cp.Permits(canon.Host, canon.Port); err != nil {
			t.Fatalf("%q allowed but the policy refuses %s: %v", target, canon.Authority(), err)
		}
		if len(rec.dialed) != 1 || rec.dialed[0] != canon.Authority() {
			t.Fatalf("matched %q, dialled %v", canon.Authority(), rec.dialed)
		}
		if len(rec.hosts) != 1 || rec.hosts[0] != canon.URL().Host {
			t.Fatalf("matched %q, sent Host %v", canon.URL().Host, rec.hosts)
		}
	})
}
