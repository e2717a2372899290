package egress_test

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// TestClientRedirectWithholdsFoldedEcho has a hostile provider echo the
// attached credential in the host of a Location, spelt so that a plain
// substring test misses it but the canonicaliser turns it back into the
// credential: upper-case (hosts are case-folded) and full-width (IDNA
// width-folds). The target must be withheld, never reported.
func TestClientRedirectWithholdsFoldedEcho(t *testing.T) {
	rig := newClientRig(t)
	fullWidth := strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' {
			return r - '!' + '！'
		}
		return r
	}, secret)
	for _, loc := range []string{
		"https://" + strings.ToUpper(secret) + ".evil.example.com/",
		"https://" + fullWidth + ".evil.example.com/",
		"https://" + strings.ToUpper(secret[:1]) + secret[1:] + ".evil.example.com/",
	} {
		q := "?status=302&to=" + url.QueryEscape(loc)
		_, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/r"+q))
		wantRefusal(t, err, egress.CodeRedirectRefused)
		var re *egress.RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("%s: %v carries no RedirectError", loc, err)
		}
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(secret)) {
			t.Errorf("location %q: error %q carries the credential, case-folded", loc, err)
		}
		if re.Target != "" {
			t.Errorf("location %q: target %q reported, want it withheld", loc, re.Target)
		}
	}
}

// TestGuardDoesNotRelayItsOwnHeaders has a destination answer with the
// guard's Checkfu-Refusal and Checkfu-Upstream-Failure headers. Relayed,
// they would make the destination's answer read as the guard's refusal or
// failure; the guard must strip them, as only it may set them.
func TestGuardDoesNotRelayItsOwnHeaders(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	got := rig.get(t, rig.client(t), "http://legit.example.test:"+rig.upPort+"/spoof")
	if got.status != http.StatusForbidden || got.refusal != "" || got.upstream != "" {
		t.Errorf("destination's 403 relayed as status %d with refusal %q upstream %q, want 403 with neither", got.status, got.refusal, got.upstream)
	}
}

// TestCanonicalRequestRefusesOverlongEscapes sends the overlong UTF-8
// spellings of "." and "/" ("%C0%AE", "%E0%80%AF", ...). A strict decoder
// rejects them, but lenient ones (the classic IIS and some Java stacks)
// read them as the ASCII byte, so "/v1/%C0%AE%C0%AE/admin" would be
// matched under "/v1" and served as "/admin": a second spelling of a dot
// segment, which the canonical form must not have. Well-formed multi-byte
// escapes stay allowed.
func TestCanonicalRequestRefusesOverlongEscapes(t *testing.T) {
	for _, p := range []string{
		"/v1/%C0%AE%C0%AE/admin", "/v1/..%C0%AFadmin", "/v1/%C1%9C", "/v1/%E0%80%AE%E0%80%AE/x",
		"/v1/%E0%81%AF", "/v1/%F0%80%80%AE", "/v1/%F0%8F%BF%BF", "/v1/%C0",
	} {
		u, err := url.Parse("https://api.example.com" + p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "GET", URL: u}); !errors.Is(err, egress.CodeRequestInvalid) {
			t.Errorf("path %q: %v, want %s", p, err, egress.CodeRequestInvalid)
		}
	}
	for _, p := range []string{"/v1/caf%C3%A9", "/v1/%E0%A4%85", "/v1/%F0%9F%98%80", "/v1/%E2%82%AC", "/v1/%E0"} {
		u, err := url.Parse("https://api.example.com" + p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "GET", URL: u}); err != nil {
			t.Errorf("path %q: %v, want it allowed", p, err)
		}
	}
}

// TestGuardBoundsUpstreamHeader has a hostile destination answer with a
// response header far larger than any real one (the workload picks the
// destination, and under "unrestricted" it can pick its own server). The
// guard must stop reading at a bound and answer 502, not buffer whatever
// the destination sends until its header deadline.
func TestGuardBoundsUpstreamHeader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				bw := bufio.NewWriter(c)
				bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")
				line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
				for range 2 << 10 {
					if _, err := bw.WriteString(line); err != nil {
						return
					}
				}
				bw.WriteString("\r\nok")
				bw.Flush()
			}()
		}
	}()
	rig := newGuardRig(t, `{"type":"unrestricted"}`)
	tr := &http.Transport{Proxy: http.ProxyURL(rig.proxyURL), DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 20}
	t.Cleanup(tr.CloseIdleConnections)
	got := rig.get(t, &http.Client{Transport: tr}, "http://"+ln.Addr().String()+"/")
	wantOutcome(t, "2 MiB response header", got, http.StatusBadGateway, string(egress.CodeUpstreamFailed))
}

// TestGuardDropsEveryForwardingClaim sends the forwarding and client
// address headers the guard's first list left out. An upstream that
// trusts the guard's egress address as a proxy reads them as the guard's
// word about the client (its address, port, path prefix, scheme), so the
// workload could speak for the guard; the guard passes on none of them.
func TestGuardDropsEveryForwardingClaim(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	claims := []string{
		"X-Forwarded-Port", "443", "X-Forwarded-Prefix", "/admin", "X-Forwarded-Server", "internal",
		"X-Forwarded-Ssl", "on", "True-Client-Ip", "10.0.0.1", "X-Client-Ip", "10.0.0.1",
		"X-Cluster-Client-Ip", "10.0.0.1", "X-Originating-Ip", "10.0.0.1", "Client-Ip", "10.0.0.1",
		"X-Remote-Addr", "10.0.0.1", "X-Remote-Ip", "10.0.0.1", "X-Original-Forwarded-For", "10.0.0.1",
		"Via", "1.1 internal-proxy", "Forwarded", "for=10.0.0.1;proto=https", "X-Real-Ip", "10.0.0.1",
	}
	got := rig.get(t, rig.client(t), "http://legit.example.test:"+rig.upPort+"/h", append(claims, "Accept", "text/plain")...)
	wantOutcome(t, "GET", got, http.StatusOK, "")
	rig.mu.Lock()
	defer rig.mu.Unlock()
	r := rig.seen[len(rig.seen)-1]
	for i := 0; i < len(claims); i += 2 {
		if v := r.Header.Get(claims[i]); v != "" {
			t.Errorf("upstream received %s: %q", claims[i], v)
		}
	}
	if r.Header.Get("Accept") != "text/plain" {
		t.Errorf("upstream lost the Accept header")
	}
}

// TestCanonicalRequestRefusesDoubleEncoding sends "/", "\", "." and
// control characters percent-encoded twice (or more). The segment
// "..%252F..%252Fadmin" is no dot segment and holds no encoded slash, so
// it matches under "/v1"; a stack that decodes twice (a proxy, then the
// application) serves "../../admin". An escape of "%" that encodes one of
// the characters the canonical form refuses is refused like it. A literal
// "%" and a double-encoded space stay allowed.
func TestCanonicalRequestRefusesDoubleEncoding(t *testing.T) {
	for _, p := range []string{
		"/v1/..%252F..%252Fadmin", "/v1/%252E%252E/admin", "/v1/%252e%252e/admin", "/v1/%25252F",
		"/v1/%255C", "/v1/%255c..", "/v1/%2500", "/v1/%250A", "/v1/%25252e", "/v1/%25C0%25AE",
	} {
		u, err := url.Parse("https://api.example.com" + p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "GET", URL: u}); !errors.Is(err, egress.CodeRequestInvalid) {
			t.Errorf("path %q: %v, want %s", p, err, egress.CodeRequestInvalid)
		}
	}
	for _, p := range []string{"/v1/100%25", "/v1/%2520", "/v1/%25zz", "/v1/%25C3%A9", "/v1/%2541", "/v1/%25"} {
		u, err := url.Parse("https://api.example.com" + p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "GET", URL: u}); err != nil {
			t.Errorf("path %q: %v, want it allowed", p, err)
		}
	}
}

// TestQueryMethodOverrideRefused: frameworks read a "_method" query
// parameter as the request's method (Laravel and Symfony with parameter
// override on, Spring's HiddenHttpMethodFilter, method-override for
// Express), so "POST /v1/items?_method=DELETE" reaches a DELETE route
// through a rule that allows only POST, as the denylisted override
// headers would. PHP also drops leading spaces ("+") from a parameter
// name and reads a leading "." as "_". Such a query is refused.
func TestQueryMethodOverrideRefused(t *testing.T) {
	for _, q := range []string{
		"_method=DELETE", "a=1&_METHOD=PUT", "%5Fmethod=DELETE", "%5fmethod=DELETE", ".method=DELETE",
		"+_method=DELETE", "%20%20_method=DELETE", "[method=DELETE", "x=1;_method=DELETE", "_method", "_method[]=DELETE",
		"_method[0]=DELETE", "_method%00=DELETE", "_method%00.x=DELETE",
	} {
		u, err := url.Parse("https://api.example.com/v1/items?" + q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "POST", URL: u}); !errors.Is(err, egress.CodeRequestInvalid) {
			t.Errorf("query %q: %v, want %s", q, err, egress.CodeRequestInvalid)
		} else if strings.Contains(err.Error(), "DELETE") {
			t.Errorf("query %q: error %q quotes the query", q, err)
		}
	}
	for _, q := range []string{"method=GET", "_methods=1", "q=_method", "a_method=1", "x=1&y=_method%3DDELETE", "+method=1", "_method_x=1", "%00_method=1", "_meth%00od=1"} {
		u, err := url.Parse("https://api.example.com/v1/items?" + q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := egress.CanonicalRequest(&http.Request{Method: "POST", URL: u}); err != nil {
			t.Errorf("query %q: %v, want it allowed", q, err)
		}
	}
	// The check keeps Decide allocation-free when it allows.
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, Methods: []string{"POST"}}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://api.example.com/v1/items?a=1&%5Fmethods=2;b&_method_x=3")
	req, err := egress.CanonicalRequest(&http.Request{Method: "POST", URL: u})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { rules.Decide(&req) }); n != 0 {
		t.Errorf("Decide with a query allocates %v times", n)
	}
}
