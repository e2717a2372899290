package egress

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

func TestCanonicalHost(t *testing.T) {
	ok := []struct{ in, want string }{
		{"example.com", "example.com"},
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"ＥＸＡＭＰＬＥ.com", "example.com"},              // full-width letters fold
		{"exa\u00admple.com", "example.com"},        // soft hyphen vanishes
		{"example\u3002com", "example.com"},         // ideographic full stop is a dot
		{"bücher.example", "xn--bcher-kva.example"}, // U-label to A-label
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"XN--BCHER-KVA.example", "xn--bcher-kva.example"},
		{"a-b.c0", "a-b.c0"},
		{"1.2.3.com", "1.2.3.com"},
		{"localhost", "localhost"},
		{"0x.example", "0x.example"},
	}
	for _, tt := range ok {
		got, err := CanonicalHost(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := CanonicalHost(got); err != nil || again != got {
			t.Errorf("CanonicalHost(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
	bad := []struct{ in, why string }{
		{"", "is empty"},
		{".", "is empty"},
		{"example.com..", "has an empty label"},
		{".example.com", "has an empty label"},
		{"a..b", "has an empty label"},
		{"127.0.0.1", "is (or IDNA maps it to) an IP literal, not a DNS name"},
		{"①②⑦.0.0.1", "is (or IDNA maps it to) an IP literal, not a DNS name"},
		{"１２７.０.０.１", "is (or IDNA maps it to) an IP literal, not a DNS name"},
		{"127.1", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"0x7f.1", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"0177.0.0.1", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"2130706433", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"foo.0x7f", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"foo.0x", "ends in a numeric label, which resolvers read as an IPv4 address"},
		{"::1", "is an IP literal, not a DNS name"},
		{"[::1]", "is an IP literal, not a DNS name"},
		{"under_score.com", "has the character '_', which host names cannot contain (letters, digits, hyphens and dots only)"},
		{"*.example.com", "has the character '*', which host names cannot contain (letters, digits, hyphens and dots only)"},
		{"exa mple.com", "has the character ' ', which host names cannot contain (letters, digits, hyphens and dots only)"},
		{"example.com:443", "has the character ':', which host names cannot contain (letters, digits, hyphens and dots only)"},
		{"-a.com", "is not a valid IDNA host name"},
		{"a\x00.com", "has the character '\\x00', which host names cannot contain (letters, digits, hyphens and dots only)"},
		{"xn--a.com", "is not a valid IDNA host name"},
		{repeat("a", 64) + ".com", "has a label longer than 63 bytes"},
	}
	for _, tt := range bad {
		got, err := CanonicalHost(tt.in)
		if err == nil {
			t.Errorf("CanonicalHost(%q) = %q, want error", tt.in, got)
			continue
		}
		want := "refused: host_invalid: egress: host " + quote(tt.in) + " " + tt.why
		if err.Error() != want || !errors.Is(err, CodeHostInvalid) {
			t.Errorf("CanonicalHost(%q) error = %q\nwant %q", tt.in, err, want)
		}
	}
}

func quote(s string) string { return checkfu.Quote(s) }

func TestCanonicalHostLengths(t *testing.T) {
	label63 := repeat("a", 63)
	name253 := label63 + "." + label63 + "." + label63 + "." + repeat("b", 61)
	if got, err := CanonicalHost(name253); err != nil || got != name253 {
		t.Errorf("CanonicalHost(253 bytes) = %q, %v", got, err)
	}
	if _, err := CanonicalHost(name253 + "b"); err == nil {
		t.Error("CanonicalHost(254 bytes) succeeded")
	}
	if _, err := CanonicalHost(repeat("a", 64) + ".com"); err == nil {
		t.Error("CanonicalHost(64-byte label) succeeded")
	}
	if _, err := CanonicalHost(repeat("a.", 600)); err == nil {
		t.Error("CanonicalHost(1200 bytes) succeeded")
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

func TestCanonicalRequest(t *testing.T) {
	hr, _ := http.NewRequest("POST", "https://API.example.com.:8443/v1/a%20b;p=1?q=1&r=%2F", nil)
	hr.Header.Set("Accept", "x")
	got, err := CanonicalRequest(hr)
	if err != nil {
		t.Fatal(err)
	}
	want := Request{Scheme: "https", Host: "api.example.com", Port: 8443, Path: "/v1/a%20b;p=1", RawQuery: "q=1&r=%2F", Method: "POST", Header: http.Header{"Accept": {"x"}}}
	if got.Scheme != want.Scheme || got.Host != want.Host || got.Port != want.Port || got.Path != want.Path ||
		got.RawQuery != want.RawQuery || got.Method != want.Method || len(got.Header) != 1 || got.Header.Get("Accept") != "x" {
		t.Errorf("CanonicalRequest = %+v\nwant %+v", got, want)
	}
	hr.Header.Set("Accept", "changed")
	if got.Header.Get("Accept") != "x" {
		t.Error("Request.Header aliases the original request's headers")
	}
	if a := got.Authority(); a != "api.example.com:8443" {
		t.Errorf("Authority() = %q", a)
	}
	if u := got.URL().String(); u != "https://api.example.com:8443/v1/a%20b;p=1?q=1&r=%2F" {
		t.Errorf("URL() = %q", u)
	}

	defaults := []struct{ url, host, authority, sent string }{
		{"https://example.com", "example.com", "example.com:443", "https://example.com/"},
		{"http://example.com", "example.com", "example.com:80", "http://example.com/"},
		{"https://example.com:443/", "example.com", "example.com:443", "https://example.com/"},
		{"http://[2001:DB8::1]:8080/", "2001:db8::1", "[2001:db8::1]:8080", "http://[2001:db8::1]:8080/"},
		{"https://[::ffff:192.0.2.1]/", "::ffff:192.0.2.1", "[::ffff:192.0.2.1]:443", "https://[::ffff:192.0.2.1]/"},
		{"https://192.0.2.1/", "192.0.2.1", "192.0.2.1:443", "https://192.0.2.1/"},
	}
	for _, tt := range defaults {
		hr, err := http.NewRequest("GET", tt.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := CanonicalRequest(hr)
		if err != nil {
			t.Errorf("CanonicalRequest(%s) = %v", tt.url, err)
			continue
		}
		if r.Host != tt.host || r.Authority() != tt.authority || r.URL().String() != tt.sent {
			t.Errorf("CanonicalRequest(%s) = host %q authority %q url %q; want %q %q %q", tt.url, r.Host, r.Authority(), r.URL(), tt.host, tt.authority, tt.sent)
		}
	}

	refused := []struct {
		name string
		req  func() *http.Request
	}{
		{"nil", func() *http.Request { return nil }},
		{"relative", func() *http.Request { return &http.Request{Method: "GET", URL: &url.URL{Path: "/x"}} }},
		{"ftp", func() *http.Request { return get("ftp://example.com/") }},
		{"userinfo", func() *http.Request { return get("https://user:pw@example.com/") }},
		{"user only", func() *http.Request { return get("https://user@example.com/") }},
		{"fragment", func() *http.Request { return get("https://example.com/#x") }},
		{"empty host", func() *http.Request { return get("https:///x") }},
		{"empty host port", func() *http.Request { return get("https://:443/x") }},
		{"leading zero port", func() *http.Request { return get("https://example.com:0443/") }},
		{"port 0", func() *http.Request { return get("https://example.com:0/") }},
		{"port 65536", func() *http.Request { return get("https://example.com:65536/") }},
		{"empty port", func() *http.Request { r := get("https://example.com/"); r.URL.Host = "example.com:"; return r }},
		{"numeric host", func() *http.Request { return get("https://127.1/") }},
		{"idna to ip", func() *http.Request { return get("https://①②⑦.0.0.1/") }},
		{"zone", func() *http.Request { return get("https://[fe80::1%25eth0]/") }},
		{"host mismatch", func() *http.Request { r := get("https://example.com/"); r.Host = "evil.com"; return r }},
		{"host port mismatch", func() *http.Request { r := get("https://example.com/"); r.Host = "example.com:8443"; return r }},
		{"bad Host", func() *http.Request { r := get("https://example.com/"); r.Host = "exa mple.com"; return r }},
		{"lower method", func() *http.Request { r := get("https://example.com/"); r.Method = "get"; return r }},
		{"method space", func() *http.Request { r := get("https://example.com/"); r.Method = "GET X"; return r }},
		{"encoded slash", func() *http.Request { return get("https://example.com/v1%2F..%2Fadmin") }},
		{"encoded slash lower", func() *http.Request { return get("https://example.com/v1%2f") }},
		{"encoded backslash", func() *http.Request { return get("https://example.com/v1%5C") }},
		{"encoded dot", func() *http.Request { return get("https://example.com/v1/%2e%2e/admin") }},
		{"encoded letter", func() *http.Request { return get("https://example.com/%61dmin") }},
		{"encoded nul", func() *http.Request { return get("https://example.com/a%00") }},
		{"dot segment", func() *http.Request { return rawPath("/v1/../admin") }},
		{"dot", func() *http.Request { return rawPath("/v1/./x") }},
		{"dotdot param", func() *http.Request { return rawPath("/v1/..;x/admin") }},
		{"trailing dotdot", func() *http.Request { return rawPath("/v1/..") }},
		{"empty segment", func() *http.Request { return rawPath("//evil.com/x") }},
		{"backslash", func() *http.Request { return rawPath("/v1\\..\\admin") }},
		{"query space", func() *http.Request { r := get("https://example.com/"); r.URL.RawQuery = "a b"; return r }},
		{"query bad escape", func() *http.Request { r := get("https://example.com/"); r.URL.RawQuery = "a=%zz"; return r }},
		{"header lower", func() *http.Request { r := get("https://example.com/"); r.Header["accept"] = []string{"x"}; return r }},
		{"header bad name", func() *http.Request { r := get("https://example.com/"); r.Header["Bad Name"] = []string{"x"}; return r }},
		{"header crlf", func() *http.Request {
			r := get("https://example.com/")
			r.Header["X-A"] = []string{"a\r\nHost: evil"}
			return r
		}},
		{"trailer", func() *http.Request { r := get("https://example.com/"); r.Trailer = http.Header{"X-A": nil}; return r }},
	}
	for _, tt := range refused {
		r, err := CanonicalRequest(tt.req())
		if err == nil {
			t.Errorf("%s: CanonicalRequest = %+v, want request_invalid", tt.name, r)
			continue
		}
		if c, _ := checkfu.CodeOf(err); c != CodeRequestInvalid {
			t.Errorf("%s: CanonicalRequest error = %v, want code request_invalid", tt.name, err)
		}
	}
}

func get(u string) *http.Request {
	r, err := http.NewRequest("GET", u, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// rawPath returns a GET request whose URL carries exactly the escaped path
// p, as a proxy receiving it in absolute form would see it.
func rawPath(p string) *http.Request {
	return &http.Request{Method: "GET", URL: &url.URL{Scheme: "https", Host: "example.com", Path: p}, Header: http.Header{}}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/v1/a%20b", "/a;b=c", "/a:b@c", "/%25", "/%C3%A9", "/a.b", "/...", "/.a", "/a/"} {
		if why := checkPath(p); why != "" {
			t.Errorf("checkPath(%q) = %q, want canonical", p, why)
		}
	}
	for _, p := range []string{"", "a", "//", "/a//b", "/.", "/..", "/a/.", "/./a", "/..;", "/.;x/a", "/%2F", "/%2f", "/%5C", "/%41", "/%7E", "/%", "/%4", "/%g0", "/%c3%a9", "/a b", "/a\"b", "/a<b", "/\x7f", "/é", "/a\\b", "/%0A", "/a?b", "/a#b"} {
		if why := checkPath(p); why == "" {
			t.Errorf("checkPath(%q) = canonical, want refusal", p)
		}
	}
}

func TestIsCanonicalHeaderKey(t *testing.T) {
	for _, k := range []string{"Accept", "Content-Type", "X-1abc", "X-A", "Www-Authenticate", "A", "X_y"} {
		if !isCanonicalHeaderKey(k) || http.CanonicalHeaderKey(k) != k {
			t.Errorf("isCanonicalHeaderKey(%q) = %v, CanonicalHeaderKey = %q", k, isCanonicalHeaderKey(k), http.CanonicalHeaderKey(k))
		}
	}
	for _, k := range []string{"", "accept", "Content-type", "CONTENT-TYPE", "X-aBc", "A b", "A:b", "é"} {
		if isCanonicalHeaderKey(k) {
			t.Errorf("isCanonicalHeaderKey(%q) = true", k)
		}
	}
}

// TestCanonicalRequestRefusalsOmitPathAndQuery: CanonicalRequest's
// refusals never quote the path, the query or an opaque URL. A query can
// carry a token, and refusals reach logs and model context.
func TestCanonicalRequestRefusalsOmitPathAndQuery(t *testing.T) {
	const token = "tok-5f3a9c"
	for _, raw := range []string{
		"https://api.example.com/v1/%2e%2e/" + token,
		"https://api.example.com/v1?key=" + token + "%zz",
		"https:" + token,
	} {
		r, err := http.NewRequest("GET", raw, nil)
		if err != nil {
			t.Fatalf("NewRequest(%q): %v", raw, err)
		}
		_, err = CanonicalRequest(r)
		if err == nil {
			t.Fatalf("CanonicalRequest(%q) accepted it", raw)
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("CanonicalRequest(%q) error %q quotes the request's content", raw, err)
		}
	}
}
