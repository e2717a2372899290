package egress_test

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
	"pgregory.net/rapid"
)

func TestRulesDecider(t *testing.T) {
	egresstest.TestDecider(t, func(rs *egress.Rules) egresstest.Decider { return rs })
}

func TestRulesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := egresstest.Rules(egress.MaxRules).Draw(t, "rules")
		doc, err := json.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		again, err := egress.ParseRules(doc)
		if err != nil {
			t.Fatalf("ParseRules(render(rules)) = %v\n%s", err, doc)
		}
		if !again.Equal(rs) {
			t.Fatalf("round trip changed the rules:\n%s", doc)
		}
		doc2, _ := json.Marshal(again)
		if string(doc2) != string(doc) {
			t.Fatalf("render is not stable:\n%s\n%s", doc, doc2)
		}
		// Canonicalisation is idempotent: the canonical rules re-canonicalise
		// to themselves.
		canon := make([]egress.Rule, rs.Len())
		for i := range canon {
			canon[i] = rs.Rule(i)
		}
		rs2, err := egress.NewRules(canon)
		if err != nil || !rs2.Equal(rs) {
			t.Fatalf("NewRules(canonical rules) = %v, equal %v", err, rs2.Equal(rs))
		}
		for i := range canon {
			if r := rs2.Rule(i); r.Host != canon[i].Host || r.PathPrefix != canon[i].PathPrefix {
				t.Fatalf("rule %d re-canonicalised from %+v to %+v", i, canon[i], r)
			}
		}
	})
}

func TestCanonicalHostProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := egresstest.HostInput().Draw(t, "host")
		h, err := egress.CanonicalHost(in)
		if err != nil {
			return
		}
		if again, err := egress.CanonicalHost(h); err != nil || again != h {
			t.Fatalf("CanonicalHost(%q) = %q, but CanonicalHost(%q) = %q, %v", in, h, h, again, err)
		}
		if _, err := netip.ParseAddr(h); err == nil {
			t.Fatalf("CanonicalHost(%q) = %q, an IP literal", in, h)
		}
		if h != strings.ToLower(h) || strings.HasSuffix(h, ".") {
			t.Fatalf("CanonicalHost(%q) = %q, not lower-case without trailing dot", in, h)
		}
	})
}

func TestSpellingsCanonicalise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := egresstest.Host().Draw(t, "host")
		s := egresstest.Spelling(h).Draw(t, "spelling")
		if got, err := egress.CanonicalHost(s); err != nil || got != h {
			t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", s, got, err, h)
		}
	})
}

func TestCanonicalRequestIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := egresstest.Rules(4).Draw(t, "rules")
		req := egresstest.Request(rs).Draw(t, "request")
		hr := &http.Request{Method: req.Method, URL: req.URL(), Header: req.Header}
		again, err := egress.CanonicalRequest(hr)
		if err != nil {
			t.Fatalf("CanonicalRequest(URL() of %+v) = %v", req, err)
		}
		if again.Scheme != req.Scheme || again.Host != req.Host || again.Port != req.Port || again.Path != req.Path ||
			again.RawQuery != req.RawQuery || again.Method != req.Method || again.Authority() != req.Authority() {
			t.Fatalf("CanonicalRequest is not idempotent: %+v -> %+v", req, again)
		}
	})
}
