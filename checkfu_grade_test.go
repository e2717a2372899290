package checkfu_test

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
)

var validGrades = []checkfu.Grade{checkfu.Unsupported, checkfu.AdvisoryFilter, checkfu.SecurityBoundary}

// anyGrade draws every uint8 value of Grade, valid or not, favouring the
// three valid ones.
func anyGrade() *rapid.Generator[checkfu.Grade] {
	return rapid.OneOf(rapid.SampledFrom(validGrades), rapid.Map(rapid.Uint8(), func(u uint8) checkfu.Grade { return checkfu.Grade(u) }))
}

// gradeText draws the three spellings, near misses of them, and arbitrary
// strings.
func gradeText() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"unsupported", "advisory_filter", "security_boundary"}),
		rapid.SampledFrom([]string{"", "Unsupported", "ADVISORY_FILTER", "security_boundary ", " advisory_filter", "security-boundary", "securityboundary", "advisory_filter\x00", "none", "unrestricted", "2"}),
		rapid.String(),
	)
}

// The grade order is a total order on exactly three values, and invalid
// values are comparable with nothing.
//
// Its mutants (AtLeast without the Valid checks, or strict) are in
// mutants_test.go.
func TestPropGradeOrderLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := anyGrade().Draw(t, "a"), anyGrade().Draw(t, "b"), anyGrade().Draw(t, "c")
		if a.Valid() && !a.AtLeast(a) {
			t.Fatalf("not reflexive: %v", a)
		}
		if a.AtLeast(b) && b.AtLeast(a) && a != b {
			t.Fatalf("not antisymmetric: %v, %v", a, b)
		}
		if a.AtLeast(b) && b.AtLeast(c) && !a.AtLeast(c) {
			t.Fatalf("not transitive: %v >= %v >= %v", a, b, c)
		}
		if a.Valid() && b.Valid() && !a.AtLeast(b) && !b.AtLeast(a) {
			t.Fatalf("not total: %v, %v", a, b)
		}
		if (!a.Valid() || !b.Valid()) && a.AtLeast(b) {
			t.Fatalf("invalid grade compared: %v >= %v", a, b)
		}
	})
	n := 0
	for u := 0; u < 256; u++ {
		if checkfu.Grade(u).Valid() {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d valid grades, want exactly 3", n)
	}
	if !checkfu.SecurityBoundary.AtLeast(checkfu.AdvisoryFilter) || !checkfu.AdvisoryFilter.AtLeast(checkfu.Unsupported) || checkfu.Unsupported.AtLeast(checkfu.AdvisoryFilter) {
		t.Fatal("order is not unsupported < advisory_filter < security_boundary")
	}
	var zero checkfu.Grade
	if zero != checkfu.Unsupported {
		t.Fatal("the zero Grade is not unsupported")
	}
}

// Parsing is strict and round-trips exactly the three spellings.
func TestPropGradeText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gradeText().Draw(t, "text")
		g, err := checkfu.ParseGrade(s)
		known := s == "unsupported" || s == "advisory_filter" || s == "security_boundary"
		if (err == nil) != known {
			t.Fatalf("ParseGrade(%q) = %v, %v", s, g, err)
		}
		if err != nil {
			if !errors.Is(err, checkfu.CodeGradeInvalid) {
				t.Fatalf("ParseGrade(%q) error lacks code: %v", s, err)
			}
			var u checkfu.Grade = checkfu.AdvisoryFilter
			if u.UnmarshalText([]byte(s)) == nil || u != checkfu.AdvisoryFilter {
				t.Fatalf("UnmarshalText(%q) accepted or changed the grade", s)
			}
			return
		}
		if g.String() != s {
			t.Fatalf("ParseGrade(%q).String() = %q", s, g)
		}
		txt, err := g.MarshalText()
		if err != nil || string(txt) != s {
			t.Fatalf("MarshalText = %q, %v", txt, err)
		}
		g2 := anyGrade().Draw(t, "g2")
		if !g2.Valid() {
			if _, err := g2.MarshalText(); err == nil {
				t.Fatalf("MarshalText(%d) succeeded", uint8(g2))
			}
		}
	})
}

// A requirement can hold only advisory_filter or security_boundary; the
// omitted (zero) requirement is satisfied exactly by advisory_filter or
// better; satisfaction is monotone in the grade and never satisfied by
// unsupported or an invalid grade.
func TestPropRequirement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gradeText().Draw(t, "text")
		r, err := checkfu.ParseRequirement(s)
		if ok := s == "advisory_filter" || s == "security_boundary"; (err == nil) != ok {
			t.Fatalf("ParseRequirement(%q) = %v, %v", s, r, err)
		}
		if err != nil {
			if !r.IsZero() || !errors.Is(err, checkfu.CodeGradeInvalid) {
				t.Fatalf("failed ParseRequirement(%q) returned %v, %v", s, r, err)
			}
			r = rapid.SampledFrom([]checkfu.Requirement{0, checkfu.RequireAdvisoryFilter, checkfu.RequireSecurityBoundary}).Draw(t, "r")
		} else if r.String() != s || r.IsZero() {
			t.Fatalf("ParseRequirement(%q) = %q", s, r)
		}
		if m := r.Min(); m != checkfu.AdvisoryFilter && m != checkfu.SecurityBoundary {
			t.Fatalf("requirement %q has minimum %v", r, m)
		}
		g, h := anyGrade().Draw(t, "g"), anyGrade().Draw(t, "h")
		if r.SatisfiedBy(g) && h.AtLeast(g) && !r.SatisfiedBy(h) {
			t.Fatalf("%q satisfied by %v but not by stronger %v", r, g, h)
		}
		if r.SatisfiedBy(checkfu.Unsupported) || (!g.Valid() && r.SatisfiedBy(g)) {
			t.Fatalf("%q satisfied by %v", r, g)
		}
		if r.IsZero() && r.SatisfiedBy(g) != (g == checkfu.AdvisoryFilter || g == checkfu.SecurityBoundary) {
			t.Fatalf("omitted requirement vs %v: %v", g, r.SatisfiedBy(g))
		}
		if r == checkfu.RequireSecurityBoundary && r.SatisfiedBy(g) != (g == checkfu.SecurityBoundary) {
			t.Fatalf("security_boundary requirement vs %v: %v", g, r.SatisfiedBy(g))
		}
		var back checkfu.Requirement
		txt, _ := r.MarshalText()
		if err := back.UnmarshalText(txt); r.IsZero() != (err != nil) || (err == nil && back != r) {
			t.Fatalf("text round trip of %q: %q, %v", r, back, err)
		}
	})
}
