package egresstest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/egress"
)

// testSequence asks ONE decider per check about many requests for the
// same rules: fresh ones, and near-variants of earlier ones (the same
// request again, or with another header, method, port, path case or a
// trailing dot on the host), and compares every decision with the
// reference. A decider with state (a cache, a memo, a fallback) that
// keys or remembers by less than the whole request answers a variant
// with an earlier request's decision.
func testSequence(t testing.TB, newDecider func(*egress.Rules) Decider) {
	rapid.Check(t, func(t *rapid.T) {
		rs := Rules(8).Draw(t, "rules")
		dec := newDecider(rs)
		var history, allowed []*egress.Request
		for range rapid.IntRange(1, 30).Draw(t, "requests") {
			var req *egress.Request
			switch from := rapid.IntRange(0, 5).Draw(t, "from"); {
			case len(allowed) > 0 && from < 3: // a variant of an allowed request: what a cache gets wrong
				req = Variant(rs, rapid.SampledFrom(allowed).Draw(t, "earlier allowed")).Draw(t, "variant")
			case len(history) > 0 && from < 5:
				req = Variant(rs, rapid.SampledFrom(history).Draw(t, "earlier")).Draw(t, "variant")
			default:
				req = Request(rs).Draw(t, "request")
			}
			history = append(history, req)
			d, err := dec.Decide(req)
			if err == nil {
				allowed = append(allowed, req)
			}
			checkConsistent(t, d, err)
			wantRule, wantCode := Reference(rs, req)
			if d.Rule() != wantRule || codeOf(err) != wantCode {
				t.Fatalf("request %d of one decider: Decide(%s %s %v) = %v, %v; reference says rule %d, code %q", len(history), req.Method, req.URL(), keys(req.Header), d, err, wantRule, wantCode)
			}
		}
	})
}

// Variant generates a canonical near-variant of the canonical request
// prev, aimed at rs: prev itself again, or prev with one header added or
// removed (denylisted, allowed by a rule, or neither), another method,
// another port, the case of its path changed, or its host spelt with a
// trailing dot. A variant the canonicaliser refuses falls back to prev.
func Variant(rs *egress.Rules, prev *egress.Request) *rapid.Generator[*egress.Request] {
	return rapid.Custom(func(t *rapid.T) *egress.Request {
		scheme, host, port, path, method := prev.Scheme, prev.Host, prev.Port, prev.Path, prev.Method
		headers := map[string]string{}
		for k := range prev.Header {
			headers[k] = prev.Header.Get(k)
		}
		switch rapid.IntRange(0, 8).Draw(t, "vary") {
		case 0: // the same request again
		case 1:
			h := DeniedHeader().Draw(t, "denied")
			if rapid.Bool().Draw(t, "lower") {
				h = strings.ToLower(h)
			}
			headers[h] = "v"
		case 2:
			var allowed []string
			for i := 0; i < rs.Len(); i++ {
				allowed = append(allowed, rs.Rule(i).Headers...)
			}
			h := HeaderName().Draw(t, "header")
			if len(allowed) > 0 && rapid.Bool().Draw(t, "allowed") {
				h = rapid.SampledFrom(allowed).Draw(t, "allowed header")
			}
			headers[h] = "v"
		case 3:
			for k := range headers {
				delete(headers, k)
				break
			}
		case 4:
			var methods []string
			for i := 0; i < rs.Len(); i++ {
				methods = append(methods, rs.Rule(i).Methods...)
			}
			method = rapid.OneOf(rapid.SampledFrom(append(methods, "GET", "POST", "DELETE")), Method().Filter(isUpper)).Draw(t, "method")
		case 5:
			ports := []uint16{port + 1, port - 1, 443, 80, 8443}
			for i := 0; i < rs.Len(); i++ {
				ports = append(ports, rs.Rule(i).Port)
			}
			port = rapid.SampledFrom(ports).Draw(t, "port")
			if port == 0 {
				port = 1
			}
		case 6:
			path = flipCase(path)
		case 7:
			host += "."
		case 8:
			if scheme == "https" {
				scheme = "http"
			} else {
				scheme = "https"
			}
		}
		u := &url.URL{Scheme: scheme, Host: host + ":" + itoa(int(port)), RawPath: path, RawQuery: prev.RawQuery}
		p, err := url.PathUnescape(path)
		if err != nil {
			return prev
		}
		u.Path = p
		hr := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{}}
		for k, v := range headers {
			hr.Header[k] = []string{v} // as sent: CanonicalRequest canonicalises the key
		}
		req, err := egress.CanonicalRequest(hr)
		if err != nil {
			return prev
		}
		return &req
	})
}

// flipCase returns path with the case of its first ASCII letter swapped
// (the letter most likely inside a rule's prefix).
func flipCase(path string) string {
	for i := 0; i < len(path); i++ {
		c := path[i]
		if path[i] == '%' { // keep escapes as they are
			i += 2
			continue
		}
		switch {
		case 'a' <= c && c <= 'z':
			return path[:i] + string(c-'a'+'A') + path[i+1:]
		case 'A' <= c && c <= 'Z':
			return path[:i] + string(c-'A'+'a') + path[i+1:]
		}
	}
	return path
}
