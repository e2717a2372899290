package egress

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
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
		g.pool = upstreamPool{maxIdle: maxIdleTotal}
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

// newRecordingGuard returns a guard for policy whose dials are recorded
// (nothing reaches the network).
func newRecordingGuard(t testing.TB, policy string) (*Guard, *recorder) {
	t.Helper()
	p, err := ParseNetworkPolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	g, err := NewGuard(GuardConfig{Policy: cp, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	g.dial = rec.dial
	return g, rec
}

// TestGuardRefusesMalformedTargets checks that a request whose target is
// not a plain absolute http URL or an authority-form CONNECT is refused
// with request_invalid and dials nothing, even where a lenient reading
// would name an allowed destination.
func TestGuardRefusesMalformedTargets(t *testing.T) {
	g, rec := newRecordingGuard(t, `{"type":"allowlist","allowed_hosts":["api.example.com:80","api.example.com:443"]}`)
	for _, raw := range []string{
		"GET https://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"GET http://user:pw@api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"CONNECT api.example.com HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"CONNECT api.example.com: HTTP/1.1\r\nHost: api.example.com:\r\n\r\n",
		"CONNECT /x HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		"CONNECT user@api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		"CONNECT api.example.com:443/x HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
	} {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if w.Code != http.StatusForbidden || w.Header().Get(RefusalHeader) != string(CodeRequestInvalid) {
			t.Errorf("%q: %d %q, want 403 %s", raw, w.Code, w.Header().Get(RefusalHeader), CodeRequestInvalid)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.dialed) != 0 {
		t.Errorf("malformed targets dialled %v", rec.dialed)
	}
}

// FuzzGuardConnectInvariant feeds CONNECT requests to the guard, parsed
// exactly as its server parses them, with a recording dialer, and checks
// the invariant: the destination dialled is the canonical form of the
// request-target, with the port the target names, and the policy permits
// it. A refused request dials nothing.
func FuzzGuardConnectInvariant(f *testing.F) {
	for _, s := range [][2]string{
		{"api.example.com:443", "api.example.com:443"},
		{"API.example.com.:443", "other.example.com:443"},
		{"api.example.com", "api.example.com"},
		{"api.example.com:80", "api.example.com:80"},
		{"api.example.com:0443", ""},
		{"/x", "api.example.com:443"},
		{"[::1]:443", ""},
		{"127.0.0.1:443", ""},
		{"ａｐｉ.example.com:443", ""},
		{"user@api.example.com:443", ""},
	} {
		f.Add(s[0], s[1])
	}
	g, rec := newRecordingGuard(f, `{"type":"allowlist","allowed_hosts":["api.example.com:443","a.example.org:8443"]}`)
	f.Fuzz(func(t *testing.T, target, host string) {
		if strings.ContainsAny(target+host, "\r\n \t") {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("CONNECT " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")))
		if err != nil {
			return
		}
		rec.mu.Lock()
		rec.dialed = nil
		rec.mu.Unlock()
		w := httptest.NewRecorder() // cannot be hijacked: an allowed CONNECT dials, then answers 502
		g.ServeHTTP(w, req)

		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.dialed) == 0 {
			if w.Code != http.StatusForbidden || w.Header().Get(RefusalHeader) == "" {
				t.Fatalf("CONNECT %q (Host %q) dialled nothing but answered %d without a refusal code", target, host, w.Code)
			}
			return
		}
		_, port, err := net.SplitHostPort(target)
		if err != nil || port == "" {
			t.Fatalf("CONNECT %q dialled %v, but the target is not host:port", target, rec.dialed)
		}
		canon, err := canonicalTarget("https", target)
		if err != nil {
			t.Fatalf("CONNECT %q dialled %v, but the target does not canonicalise: %v", target, rec.dialed, err)
		}
		if err := g.policy.Permits(canon.Host, canon.Port); err != nil {
			t.Fatalf("CONNECT %q dialled %v, but the policy refuses %s: %v", target, rec.dialed, canon.Authority(), err)
		}
		if len(rec.dialed) != 1 || rec.dialed[0] != canon.Authority() || strconv.Itoa(int(canon.Port)) != port {
			t.Fatalf("CONNECT %q: matched %q, dialled %v", target, canon.Authority(), rec.dialed)
		}
	})
}

// TestLogTextQuotesOnce: a plain host goes to the handler as it is, to
// be quoted once if at all; hostile or long text is escaped and cut.
func TestLogTextQuotesOnce(t *testing.T) {
	long := strings.Repeat("a", checkfu.MaxQuoted+1)
	for in, want := range map[string]string{
		"api.example.com:443": "api.example.com:443",
		"a b":                 "a b", // the text handler quotes it, once
		"evil\x1b[2J":         `"evil\x1b[2J"`,
		"\xff":                `"\xff"`,
		`q"uote`:              `"q\"uote"`,
		long:                  checkfu.Quote(long),
	} {
		if got := logText(in); got != want {
			t.Errorf("logText(%q) = %q, want %q", in, got, want)
		}
	}
}
