package egress

import (
	"errors"
	"testing"
)

func TestHeaderDenied(t *testing.T) {
	denied := []string{
		"Host", "host", "HOST", "Authorization", "authorization", "Proxy-Authorization", "Proxy", "Cookie", "Cookie2",
		"Forwarded", "X-Forwarded-For", "x-forwarded-host", "X-Forwarded-Proto", "X-Forwarded-Anything", "X-Real-Ip", "X-Real-IP",
		"Via", "X-Original-Url", "X-Rewrite-Url", "True-Client-Ip", "Max-Forwards",
		"X-Http-Method-Override", "X-HTTP-Method", "X-Method-Override",
		"Connection", "Keep-Alive", "TE", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Proxy-Connection",
		"Metadata-Flavor", "Metadata", "X-aws-ec2-metadata-token", "X-Aws-Ec2-Metadata-Token-Ttl-Seconds",
		"X-Google-Metadata-Request", "X-aliyun-ecs-metadata-token",
		"X_Forwarded_For", "Authorization_", "_", "x_y", "Accept_",
		"Proxy-Anything", "X-Envoy-Original-Dst-Host", "X-Middleware-Subrequest", "X-Originating-IP", "Front-End-Https",
	}
	for _, h := range denied {
		if !HeaderDenied(h) {
			t.Errorf("HeaderDenied(%q) = false, want true", h)
		}
	}
	allowed := []string{"Accept", "Content-Type", "User-Agent", "X-Request-Id", "X-Forwarded", "Metadata-Foo", "Hostname", "Authorization-Hint", "If-None-Match"}
	for _, h := range allowed {
		if HeaderDenied(h) {
			t.Errorf("HeaderDenied(%q) = true, want false", h)
		}
	}
}

func TestDenylistWinsInDecide(t *testing.T) {
	rs := mustRules(t, `[{"host":"api.example.com","port":443,"methods":["GET"],"headers":["Accept"]}]`)
	for _, h := range []string{"Authorization", "Cookie", "X-Forwarded-For", "Metadata-Flavor", "Transfer-Encoding", "X_Accept", "Host"} {
		req := mustRequest(t, "GET", "https://api.example.com/", "Accept", "*/*")
		req.Header[h] = []string{"x"}
		d, err := rs.Decide(req)
		if d.Allowed() || !errors.Is(err, CodeHeaderDenied) {
			t.Errorf("Decide(with %s) = %v, %v; want header_denied", h, d, err)
		}
	}
	// The denylist is checked before rules: even a request no rule matches
	// is refused for its denied header.
	req := mustRequest(t, "GET", "https://other.example.com/", "Authorization", "x")
	if _, err := rs.Decide(req); !errors.Is(err, CodeHeaderDenied) {
		t.Errorf("Decide(unmatched, Authorization) = %v; want header_denied", err)
	}
}

// TestDenylistTables checks the fast-path tables against the denylist.
func TestDenylistTables(t *testing.T) {
	for _, p := range deniedHeaderPrefixes {
		if !canonicalHeaderDenied(p) || !canonicalHeaderDenied(p+"Anything") {
			t.Errorf("prefix %q is not denied", p)
		}
	}
	for name := range deniedHeaders {
		if !canonicalHeaderDenied(name) || !isCanonicalHeaderKey(name) {
			t.Errorf("denylist entry %q is not denied or not canonical", name)
		}
	}
	long := "X-" + repeat("a", 80)
	if canonicalHeaderDenied(long) {
		t.Errorf("%q denied", long)
	}
}
