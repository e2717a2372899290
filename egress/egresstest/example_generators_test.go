package egresstest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// The generators feed an integrator's rapid properties. These two check a
// canonicaliser: CanonicalHost is idempotent on whatever hostile input it
// accepts, and every spelling of a canonical host maps back to it. They
// need a test's *testing.T, so they are compiled, not run.
func Example_property() {
	testCanonicalHost := func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			in := egresstest.HostInput().Draw(t, "input")
			h, err := egress.CanonicalHost(in)
			if err != nil {
				if !errors.Is(err, egress.CodeHostInvalid) {
					t.Fatalf("CanonicalHost(%q) = %v, want an host_invalid refusal", in, err)
				}
				return
			}
			if again, err := egress.CanonicalHost(h); again != h || err != nil {
				t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", h, again, err, h)
			}
		})
	}
	testSpelling := func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			h := egresstest.Host().Draw(t, "host")
			s := egresstest.Spelling(h).Draw(t, "spelling")
			if got, err := egress.CanonicalHost(s); got != h || err != nil {
				t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", s, got, err, h)
			}
		})
	}
	_, _ = testCanonicalHost, testSpelling // TestXxx(t *testing.T) in a _test.go file
}

// Outside rapid.Check, Example draws one value for a given seed.

func ExampleHost() {
	ok := true
	for i := range 50 {
		h := egresstest.Host().Example(i)
		c, err := egress.CanonicalHost(h)
		ok = ok && err == nil && c == h
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleSpelling() {
	ok := true
	for i := range 50 {
		h := egresstest.Host().Example(i)
		c, err := egress.CanonicalHost(egresstest.Spelling(h).Example(i))
		ok = ok && err == nil && c == h
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleHostInput() {
	refused := 0
	for i := range 100 {
		if _, err := egress.CanonicalHost(egresstest.HostInput().Example(i)); errors.Is(err, egress.CodeHostInvalid) {
			refused++
		}
	}
	fmt.Println(refused > 0) // hostile input: much of it is refused
	// Output: true
}

func ExampleLabel() {
	ok := true
	for i := range 50 {
		l := egresstest.Label().Example(i)
		_, err := egress.CanonicalHost(l + ".example")
		ok = ok && err == nil && !strings.Contains(l, ".")
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleWildcardBase() {
	ok := true
	for i := range 20 {
		base := egresstest.WildcardBase().Example(i)
		_, err := egress.NewRules([]egress.Rule{{Host: "*." + base, Port: 443, Methods: []string{"GET"}}})
		ok = ok && err == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleHeaderName() {
	ok := true
	for i := range 50 {
		ok = ok && !egress.HeaderDenied(egresstest.HeaderName().Example(i))
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleDeniedHeader() {
	ok := true
	for i := range 50 {
		ok = ok && egress.HeaderDenied(egresstest.DeniedHeader().Example(i))
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleMethod() {
	ok := true
	for i := range 20 {
		m := egresstest.Method().Example(i)
		ok = ok && m != "" && !strings.ContainsAny(m, " \t")
	}
	fmt.Println(ok)
	// Output: true
}

func ExamplePath() {
	ok := true
	for i := range 50 {
		p := egresstest.Path().Example(i)
		ok = ok && strings.HasPrefix(p, "/") && !strings.Contains(p, "//")
	}
	fmt.Println(ok)
	// Output: true
}

func ExamplePathPrefix() {
	ok := true
	for i := range 50 {
		_, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: egresstest.PathPrefix().Example(i), Methods: []string{"GET"}}})
		ok = ok && err == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleSegment() {
	ok := true
	for i := range 50 {
		s := egresstest.Segment().Example(i)
		ok = ok && s != "" && s != "." && s != ".." && !strings.Contains(s, "/")
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleQuery() {
	ok := true
	for i := range 50 {
		ok = ok && !strings.HasPrefix(egresstest.Query().Example(i), "?")
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleRule() {
	ok := true
	for i := range 20 {
		_, err := egress.NewRules([]egress.Rule{egresstest.Rule().Example(i)})
		ok = ok && err == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleRules() {
	rs := egresstest.Rules(4).Example(1)
	fmt.Println(rs.Len() >= 1 && rs.Len() <= 4)
	// Output: true
}

// Reference is the slow, obvious decision; a Decider must agree with it on
// every generated request.
func ExampleReference() {
	agree := true
	for i := range 50 {
		rs := egresstest.Rules(3).Example(i)
		req := egresstest.Request(rs).Example(i)
		d, err := rs.Decide(req)
		rule, code := egresstest.Reference(rs, req)
		got, _ := checkfu.CodeOf(err)
		agree = agree && got == code && (err != nil || d.Rule() == rule)
	}
	fmt.Println(agree)
	// Output: true
}

func ExampleRequest() {
	rs := egresstest.Rules(2).Example(2)
	allowed, refused := 0, 0
	for i := range 100 {
		if _, err := rs.Decide(egresstest.Request(rs).Example(i)); err == nil {
			allowed++
		} else {
			refused++
		}
	}
	fmt.Println(allowed > 0, refused > 0) // every outcome is common
	// Output: true true
}

// A hand-built Request may only be refused, or allowed when it happens to
// be canonical; Decide never panics on it.
func ExampleHandBuiltRequest() {
	rs := egresstest.Rules(2).Example(3)
	refused := 0
	for i := range 100 {
		if _, err := rs.Decide(egresstest.HandBuiltRequest(rs).Example(i)); err != nil {
			refused++
		}
	}
	fmt.Println(refused > 0)
	// Output: true
}
