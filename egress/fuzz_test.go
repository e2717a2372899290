package egress

import (
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ruleSeeds returns the rules documents under testdata/rules. Finding
// none is a failure: seeds that silently vanish test nothing.
func ruleSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "rules", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no seed documents in testdata/rules (%v)", err)
	}
	seeds := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds[filepath.Base(p)] = b
	}
	return seeds
}

// TestRuleSeeds checks that each seed document is accepted or refused as
// its name says.
func TestRuleSeeds(t *testing.T) {
	for name, doc := range ruleSeeds(t) {
		_, err := ParseRules(doc)
		if valid := strings.HasPrefix(name, "valid-"); valid != (err == nil) {
			t.Errorf("ParseRules(%s) = %v", name, err)
		}
	}
}

// FuzzParseRules: ParseRules never panics, and a document it accepts
// renders to a document that parses to equal Rules and renders the same.
func FuzzParseRules(f *testing.F) {
	for _, doc := range ruleSeeds(f) {
		f.Add(doc)
	}
	f.Add([]byte(`[{"host":"*.example.com","port":65535,"path_prefix":"/","methods":["get"],"headers":[]}]`))
	f.Add([]byte(`[{"host":"a.example","port":443,"methods":["GET"]},{"host":"A.EXAMPLE.","port":443,"methods":["get"]}]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		rs, err := ParseRules(doc)
		if err != nil {
			if rs != nil {
				t.Fatalf("ParseRules returned rules and an error: %v", err)
			}
			return
		}
		out, err := json.Marshal(rs)
		if err != nil {
			t.Fatalf("MarshalJSON of accepted rules = %v", err)
		}
		again, err := ParseRules(out)
		if err != nil {
			t.Fatalf("ParseRules(render) = %v\ninput %q\nrender %s", err, doc, out)
		}
		if !again.Equal(rs) {
			t.Fatalf("round trip changed the rules: %q -> %s", doc, out)
		}
		out2, _ := json.Marshal(again)
		if string(out2) != string(out) {
			t.Fatalf("render not stable: %s vs %s", out, out2)
		}
	})
}

// FuzzCanonicalHost: CanonicalHost never panics; its output is idempotent,
// a canonical DNS name, and never parses as an IP address.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"example.com", "Example.COM.", "bücher.example", "①②⑦.0.0.1", "127.1", "0x7f.1",
		"exa\u00admple.com", "example\u3002com", "[::1]", "::ffff:127.0.0.1", "xn--bcher-kva.example", "a..b", "*.example.com",
		"ＥＸＡＭＰＬＥ.com", "1.2.3.4.", "0x.example", "foo.0x", "xn--a", "a\u200db.com", "١٢٣.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := CanonicalHost(s)
		if err != nil {
			return
		}
		if again, err := CanonicalHost(h); err != nil || again != h {
			t.Fatalf("CanonicalHost(%q) = %q; CanonicalHost(%q) = %q, %v", s, h, h, again, err)
		}
		if _, err := netip.ParseAddr(h); err == nil {
			t.Fatalf("CanonicalHost(%q) = %q, an IP literal", s, h)
		}
		if why := checkDNSName(h); why != "" {
			t.Fatalf("CanonicalHost(%q) = %q, which %s", s, h, why)
		}
	})
}

// FuzzCanonicalRequest: CanonicalRequest never panics, and its output is
// canonical: the Host re-canonicalises to itself, Authority() splits back
// into the same host and port, the path is canonical, and the URL it
// sends canonicalises to the same request. That is the invariant "the
// host matched is the host dialled is the Host sent".
func FuzzCanonicalRequest(f *testing.F) {
	f.Add("GET", "https://api.example.com/v1?x=1", "", "Accept")
	f.Add("POST", "https://API.Example.COM.:8443/v1/a%20b", "api.example.com:8443", "Content-Type")
	f.Add("GET", "http://[2001:db8::1]:8080/", "", "")
	f.Add("GET", "https://①②⑦.0.0.1/", "", "")
	f.Add("GET", "https://user@example.com/", "", "")
	f.Add("GET", "https://example.com/v1/%2e%2e/admin", "", "")
	f.Add("GET", "https://example.com:0443/", "", "")
	f.Add("get", "https://example.com/", "evil.com", "x_forwarded_for")
	f.Add("GET", "https://example.com/a//b", "", "")
	f.Add("GET", "https://[::ffff:127.0.0.1]/", "", "")
	f.Fuzz(func(t *testing.T, method, rawURL, host, headerName string) {
		u, err := url.Parse(rawURL)
		if err != nil {
			return
		}
		hr := &http.Request{Method: method, URL: u, Host: host, Header: http.Header{}}
		if headerName != "" {
			hr.Header[headerName] = []string{"v"}
		}
		req, err := CanonicalRequest(hr)
		if err != nil {
			return
		}
		if a, err := netip.ParseAddr(req.Host); err == nil {
			if a.String() != req.Host || a.Zone() != "" {
				t.Fatalf("IP host %q is not in canonical text form", req.Host)
			}
		} else if h, err := CanonicalHost(req.Host); err != nil || h != req.Host {
			t.Fatalf("Host %q re-canonicalises to %q, %v (from %q)", req.Host, h, err, rawURL)
		}
		h, p, err := net.SplitHostPort(req.Authority())
		if err != nil || h != req.Host || p != strconv.Itoa(int(req.Port)) || req.Port == 0 {
			t.Fatalf("Authority() = %q splits to %q %q, %v; want %q %d", req.Authority(), h, p, err, req.Host, req.Port)
		}
		if why := checkPath(req.Path); why != "" {
			t.Fatalf("Path %q %s", req.Path, why)
		}
		sent := req.URL()
		again, err := CanonicalRequest(&http.Request{Method: req.Method, URL: sent, Host: sent.Host, Header: req.Header})
		if err != nil {
			t.Fatalf("CanonicalRequest(URL() = %s) = %v (from %q)", sent, err, rawURL)
		}
		if again.Host != req.Host || again.Port != req.Port || again.Path != req.Path || again.RawQuery != req.RawQuery ||
			again.Scheme != req.Scheme || again.Method != req.Method {
			t.Fatalf("not idempotent: %+v -> %+v", req, again)
		}
		// The Host header Go would send is the canonical host (plus a
		// non-default port): the host matched is the Host sent.
		if sentHost, _, _ := strings.Cut(strings.TrimPrefix(sent.Host, "["), "]"); strings.HasPrefix(sent.Host, "[") {
			if sentHost != req.Host {
				t.Fatalf("Host sent %q, matched %q", sent.Host, req.Host)
			}
		} else if sent.Hostname() != req.Host {
			t.Fatalf("Host sent %q, matched %q", sent.Host, req.Host)
		}
	})
}
