package egresstest

import (
	"testing"

	"github.com/checkfu/checkfu/egress"
	"pgregory.net/rapid"
)

func TestIDNHosts(t *testing.T) {
	for _, p := range idnHosts {
		if got, err := egress.CanonicalHost(p[0]); err != nil || got != p[1] {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", p[0], got, err, p[1])
		}
	}
}

func TestDeniedHeadersAreDenied(t *testing.T) {
	for _, h := range DeniedHeaders {
		if !egress.HeaderDenied(h) {
			t.Errorf("HeaderDenied(%q) = false", h)
		}
	}
}

func TestGeneratorsProduceValidValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := Host().Draw(t, "host")
		if got, err := egress.CanonicalHost(h); err != nil || got != h {
			t.Fatalf("Host() = %q, not canonical: %q, %v", h, got, err)
		}
		if name := HeaderName().Draw(t, "header"); egress.HeaderDenied(name) {
			t.Fatalf("HeaderName() = %q, a denied header", name)
		}
		r := Rule().Draw(t, "rule")
		if _, err := egress.NewRules([]egress.Rule{r}); err != nil {
			t.Fatalf("Rule() = %+v, refused: %v", r, err)
		}
		rs := Rules(egress.MaxRules).Draw(t, "rules")
		if rs.Len() < 1 || rs.Len() > egress.MaxRules {
			t.Fatalf("Rules() has %d rules", rs.Len())
		}
		req := Request(rs).Draw(t, "request")
		if rule, code := Reference(rs, req); (rule >= 0) == (code != "") {
			t.Fatalf("Reference = %d, %q: inconsistent", rule, code)
		}
	})
}
