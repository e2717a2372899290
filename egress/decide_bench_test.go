package egress

import (
	"fmt"
	"net/http"
	"testing"
)

var benchHeaders = []string{"Accept", "Accept-Language", "Content-Type", "User-Agent", "If-None-Match", "X-Request-Id", "X-Trace", "Idempotency-Key"}

// benchRules returns n rules for the same host and port, each for its own
// path prefix and listing all benchHeaders, so that every rule gets as far
// as the path check and the one that allows is the last.
func benchRules(b *testing.B, n int) *Rules {
	rules := make([]Rule, n)
	for i := range rules {
		rules[i] = Rule{Host: "api.example.com", Port: 443, PathPrefix: fmt.Sprintf("/svc%d", i),
			Methods: []string{"GET", "POST", "PUT"}, Headers: benchHeaders}
	}
	rs, err := NewRules(rules)
	if err != nil {
		b.Fatal(err)
	}
	return rs
}

func benchRequest(b *testing.B, path string) *Request {
	hr, err := http.NewRequest("POST", "https://api.example.com"+path+"?page=2", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range benchHeaders {
		hr.Header.Set(h, "value")
	}
	req, err := CanonicalRequest(hr)
	if err != nil {
		b.Fatal(err)
	}
	return &req
}

func benchDecide(b *testing.B, rs *Rules, req *Request, wantRule int) {
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		d, _ := rs.Decide(req)
		if d.Rule() != wantRule {
			b.Fatalf("Decide = %v, want rule %d", d, wantRule)
		}
	}
}

// BenchmarkDecide32Rules8Headers is the target: a decision against 32
// rules with 8 headers, allowed by the last rule.
func BenchmarkDecide32Rules8Headers(b *testing.B) {
	benchDecide(b, benchRules(b, 32), benchRequest(b, "/svc31/items/42"), 31)
}

// BenchmarkDecide1Rule8Headers is the baseline: the same request against
// one rule.
func BenchmarkDecide1Rule8Headers(b *testing.B) {
	benchDecide(b, benchRules(b, 1), benchRequest(b, "/svc0/items/42"), 0)
}

// BenchmarkMapLookup8Headers is a second baseline: looking the request's 8
// header names up in a map, the least any header allowlist must do.
func BenchmarkMapLookup8Headers(b *testing.B) {
	req := benchRequest(b, "/svc0/items/42")
	allowed := map[string]struct{}{}
	for _, h := range benchHeaders {
		allowed[h] = struct{}{}
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		n := 0
		for k := range req.Header {
			if _, ok := allowed[k]; ok {
				n++
			}
		}
		if n != len(benchHeaders) {
			b.Fatal(n)
		}
	}
}

// BenchmarkDecide32RulesRefused measures a refusal (no rule matches):
// refusals allocate their error.
func BenchmarkDecide32RulesRefused(b *testing.B) {
	benchDecide(b, benchRules(b, 32), benchRequest(b, "/other"), -1)
}

// BenchmarkCanonicalRequest measures canonicalising the benchmark request
// (done once per request, before Decide).
func BenchmarkCanonicalRequest(b *testing.B) {
	hr, _ := http.NewRequest("POST", "https://API.example.com/svc31/items/42?page=2", nil)
	for _, h := range benchHeaders {
		hr.Header.Set(h, "value")
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := CanonicalRequest(hr); err != nil {
			b.Fatal(err)
		}
	}
}
