package egress

import (
	"errors"
	"net/http"
	"testing"

	"github.com/checkfu/checkfu"
)

// mustRules parses a rules document or fails the test.
func mustRules(t testing.TB, doc string) *Rules {
	t.Helper()
	rs, err := ParseRules([]byte(doc))
	if err != nil {
		t.Fatalf("ParseRules(%s) = %v", doc, err)
	}
	return rs
}

// mustRequest builds a canonical request or fails the test.
func mustRequest(t testing.TB, method, url string, headers ...string) *Request {
	t.Helper()
	hr, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatalf("http.NewRequest(%q, %q) = %v", method, url, err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		hr.Header.Add(headers[i], headers[i+1])
	}
	req, err := CanonicalRequest(hr)
	if err != nil {
		t.Fatalf("CanonicalRequest(%s %s) = %v", method, url, err)
	}
	return &req
}

const testRules = `[
 {"host":"api.example.com","port":443,"path_prefix":"/v1","methods":["GET","post"],"headers":["Accept","content-type"]},
 {"host":"*.cdn.example.org","port":443,"methods":["GET"]},
 {"host":"api.example.com","port":8443,"path_prefix":"/admin","methods":["DELETE"],"headers":["X-Trace"]}
]`

func TestDecide(t *testing.T) {
	rs := mustRules(t, testRules)
	tests := []struct {
		method, url string
		headers     []string
		rule        int
		code        checkfu.Code
	}{
		{"GET", "https://api.example.com/v1", nil, 0, ""},
		{"GET", "https://api.example.com/v1/users?x=1", []string{"Accept", "*/*"}, 0, ""},
		{"POST", "https://API.Example.COM./v1/x", []string{"Content-Type", "a/b"}, 0, ""},
		{"GET", "https://a.cdn.example.org/anything", nil, 1, ""},
		{"DELETE", "https://api.example.com:8443/admin/1", []string{"X-Trace", "1"}, 2, ""},
		// Rules name no scheme: a port-443 rule allows plain http on 443
		// too (the credentialed Client refuses to attach over it).
		{"GET", "http://api.example.com:443/v1", nil, 0, ""},

		{"GET", "https://api.example.com/v10", nil, -1, CodeNoRuleMatched},
		{"GET", "https://api.example.com/", nil, -1, CodeNoRuleMatched},
		{"GET", "https://api.example.com:444/v1", nil, -1, CodeNoRuleMatched},
		{"GET", "http://api.example.com/v1", nil, -1, CodeNoRuleMatched},
		{"GET", "https://cdn.example.org/x", nil, -1, CodeNoRuleMatched},
		{"GET", "https://a.b.cdn.example.org/x", nil, -1, CodeNoRuleMatched},
		{"GET", "https://evil.com/v1", nil, -1, CodeNoRuleMatched},
		{"GET", "https://93.184.215.14/v1", nil, -1, CodeNoRuleMatched},
		{"PUT", "https://api.example.com/v1", nil, -1, CodeMethodDenied},
		{"GET", "https://api.example.com/v1", []string{"X-Other", "1"}, -1, CodeHeaderNotAllowed},
		{"GET", "https://api.example.com/v1", []string{"Authorization", "Bearer x"}, -1, CodeHeaderDenied},
		{"GET", "https://api.example.com/v1", []string{"X-Forwarded-Host", "x"}, -1, CodeHeaderDenied},
	}
	for _, tt := range tests {
		req := mustRequest(t, tt.method, tt.url, tt.headers...)
		d, err := rs.Decide(req)
		if d.Rule() != tt.rule || d.Allowed() != (tt.rule >= 0) {
			t.Errorf("Decide(%s %s %v) = %v, %v; want rule %d", tt.method, tt.url, tt.headers, d, err, tt.rule)
			continue
		}
		if tt.code == "" {
			if err != nil {
				t.Errorf("Decide(%s %s) error = %v, want nil", tt.method, tt.url, err)
			}
			continue
		}
		if !errors.Is(err, tt.code) {
			t.Errorf("Decide(%s %s %v) error = %v, want code %s", tt.method, tt.url, tt.headers, err, tt.code)
		}
	}
}

func TestDecideZeroAndNil(t *testing.T) {
	req := mustRequest(t, "GET", "https://api.example.com/v1")
	var nilRules *Rules
	for _, rs := range []*Rules{nilRules, {}} {
		d, err := rs.Decide(req)
		if d.Allowed() || !errors.Is(err, CodeNoRuleMatched) {
			t.Errorf("Decide on empty rules = %v, %v; want deny no_rule_matched", d, err)
		}
	}
	if (Decision{}).Allowed() {
		t.Error("zero Decision allows")
	}
}

func TestDecideRefusesHandBuilt(t *testing.T) {
	rs := mustRules(t, testRules)
	base := func() Request {
		return Request{Scheme: "https", Host: "a.cdn.example.org", Port: 443, Path: "/x", Method: "GET"}
	}
	if d, err := rs.Decide(ptr(base())); !d.Allowed() {
		t.Fatalf("Decide(base) = %v, %v", d, err)
	}
	tests := []struct {
		name string
		edit func(*Request)
	}{
		{"userinfo in host", func(r *Request) { r.Host = "evil.com:80@x.cdn.example.org" }},
		{"at in label", func(r *Request) { r.Host = "evil@x.cdn.example.org" }},
		{"upper-case host", func(r *Request) { r.Host = "A.cdn.example.org" }},
		{"trailing dot", func(r *Request) { r.Host = "a.cdn.example.org." }},
		{"empty host", func(r *Request) { r.Host = "" }},
		{"dot segment", func(r *Request) { r.Host = "api.example.com"; r.Path = "/v1/../admin" }},
		{"encoded slash", func(r *Request) { r.Host = "api.example.com"; r.Path = "/v1/%2F..%2Fadmin" }},
		{"relative path", func(r *Request) { r.Path = "x" }},
		{"scheme", func(r *Request) { r.Scheme = "HTTPS" }},
		{"port 0", func(r *Request) { r.Port = 0 }},
		{"lower method", func(r *Request) { r.Method = "get" }},
		{"empty method", func(r *Request) { r.Method = "" }},
		{"lower header", func(r *Request) { r.Header = map[string][]string{"accept": {"x"}} }},
	}
	for _, tt := range tests {
		req := base()
		tt.edit(&req)
		d, err := rs.Decide(&req)
		if d.Allowed() || err == nil {
			t.Errorf("%s: Decide(%+v) = %v, %v; want refusal", tt.name, req, d, err)
		}
	}
	if d, err := rs.Decide(nil); d.Allowed() || !errors.Is(err, CodeRequestInvalid) {
		t.Errorf("Decide(nil) = %v, %v", d, err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestDecisionString(t *testing.T) {
	if s := (Decision{}).String(); s != "deny" {
		t.Errorf("zero Decision = %q", s)
	}
	if s := (Decision{rule: 3}).String(); s != "allow(rule 2)" {
		t.Errorf("Decision{3} = %q", s)
	}
	if r := (Decision{}).Rule(); r != -1 {
		t.Errorf("zero Decision.Rule() = %d", r)
	}
}

// TestDecideUnion checks that a request is allowed when any rule allows
// all of it, and that the lowest such rule is reported.
func TestDecideUnion(t *testing.T) {
	rs := mustRules(t, `[
	 {"host":"api.example.com","port":443,"methods":["GET"],"headers":["Accept"]},
	 {"host":"api.example.com","port":443,"methods":["GET"],"headers":["Accept","X-Trace"]},
	 {"host":"api.example.com","port":443,"path_prefix":"/v1","methods":["GET","POST"],"headers":["Accept","X-Trace"]}]`)
	tests := []struct {
		method, url string
		headers     []string
		rule        int
	}{
		{"GET", "https://api.example.com/v1", []string{"Accept", "x"}, 0},
		{"GET", "https://api.example.com/v1", []string{"X-Trace", "x"}, 1},
		{"POST", "https://api.example.com/v1/x", []string{"X-Trace", "x"}, 2},
	}
	for _, tt := range tests {
		d, err := rs.Decide(mustRequest(t, tt.method, tt.url, tt.headers...))
		if d.Rule() != tt.rule {
			t.Errorf("Decide(%s %s %v) = %v, %v; want rule %d", tt.method, tt.url, tt.headers, d, err, tt.rule)
		}
	}
}

// TestDecideConcurrent runs Decide on shared Rules from many goroutines;
// under -race it proves Rules are safe for concurrent use.
func TestDecideConcurrent(t *testing.T) {
	rs := mustRules(t, testRules)
	reqs := []*Request{
		mustRequest(t, "GET", "https://api.example.com/v1/x", "Accept", "x"),
		mustRequest(t, "GET", "https://a.cdn.example.org/"),
		mustRequest(t, "GET", "https://evil.example.com/"),
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				req := reqs[(g+i)%len(reqs)]
				d, _ := rs.Decide(req)
				if want := req.Host != "evil.example.com"; d.Allowed() != want {
					t.Errorf("Decide(%s) = %v", req.Host, d)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

// TestDecideRefusalTextIsStable checks that a request with several bad
// headers is refused with the same message every time.
func TestDecideRefusalTextIsStable(t *testing.T) {
	rs := mustRules(t, testRules)
	req := mustRequest(t, "GET", "https://api.example.com/v1")
	req.Header = http.Header{"Cookie": {"a"}, "Authorization": {"b"}, "X-Forwarded-For": {"c"}, "accept": {"d"}, "Via": {"e"}}
	want := `refused: header_denied: egress: header "Authorization" is on the fixed denylist`
	for range 20 {
		if _, err := rs.Decide(req); err == nil || err.Error() != want {
			t.Fatalf("Decide = %v, want %s", err, want)
		}
	}
	req.Header = http.Header{"Accept": {"a"}, "x-b": {"b"}, "x-a": {"c"}}
	want = `refused: request_invalid: egress: header name "x-a" is not canonical`
	for range 20 {
		if _, err := rs.Decide(req); err == nil || err.Error() != want {
			t.Fatalf("Decide = %v, want %s", err, want)
		}
	}
}
