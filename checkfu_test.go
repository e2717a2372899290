package checkfu_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu"
)

func TestRefusalIs(t *testing.T) {
	const code checkfu.Code = "no_rule_matched"
	err := fmt.Errorf("deciding: %w", checkfu.Refuse(code, "host %q", "example.com"))
	if !errors.Is(err, code) {
		t.Fatalf("errors.Is(%v, %q) = false", err, code)
	}
	if errors.Is(err, checkfu.Code("header_denied")) {
		t.Fatalf("errors.Is matched another code")
	}
	if got, ok := checkfu.CodeOf(err); !ok || got != code {
		t.Fatalf("CodeOf = %q, %v", got, ok)
	}
	if _, ok := checkfu.CodeOf(errors.New("plain")); ok {
		t.Fatal("CodeOf found a code in a plain error")
	}
	want := `refused: no_rule_matched: host "example.com"`
	if got := checkfu.Refuse(code, "host %q", "example.com").Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseGrade(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want checkfu.Grade
		ok   bool
	}{
		{"unsupported", checkfu.Unsupported, true},
		{"advisory_filter", checkfu.AdvisoryFilter, true},
		{"security_boundary", checkfu.SecurityBoundary, true},
		{"", 0, false},
		{"Security_Boundary", 0, false},
		{"security_boundary ", 0, false},
		{"securityboundary", 0, false},
	} {
		g, err := checkfu.ParseGrade(tt.in)
		if (err == nil) != tt.ok || (tt.ok && g != tt.want) {
			t.Errorf("ParseGrade(%q) = %v, %v", tt.in, g, err)
		}
		if err != nil && !errors.Is(err, checkfu.CodeGradeInvalid) {
			t.Errorf("ParseGrade(%q) error %v lacks code", tt.in, err)
		}
	}
}

func TestRequirement(t *testing.T) {
	var omitted checkfu.Requirement
	if omitted.SatisfiedBy(checkfu.Unsupported) {
		t.Error("omitted requirement satisfied by unsupported")
	}
	if !omitted.SatisfiedBy(checkfu.AdvisoryFilter) || !omitted.SatisfiedBy(checkfu.SecurityBoundary) {
		t.Error("omitted requirement not satisfied by advisory_filter or better")
	}
	if checkfu.RequireSecurityBoundary.SatisfiedBy(checkfu.AdvisoryFilter) {
		t.Error("security_boundary requirement satisfied by advisory_filter")
	}
	for _, s := range []string{"unsupported", "", "Advisory_filter"} {
		if _, err := checkfu.ParseRequirement(s); err == nil {
			t.Errorf("ParseRequirement(%q) succeeded", s)
		}
	}
	if checkfu.Grade(7).AtLeast(checkfu.Unsupported) {
		t.Error("invalid grade is at least unsupported")
	}
}

func TestInvalidRequirementSatisfiedByNothing(t *testing.T) {
	r := checkfu.Requirement(3)
	for _, g := range []checkfu.Grade{checkfu.Unsupported, checkfu.AdvisoryFilter, checkfu.SecurityBoundary} {
		if r.SatisfiedBy(g) {
			t.Errorf("Requirement(3).SatisfiedBy(%v) = true", g)
		}
	}
	if _, err := r.MarshalText(); err == nil {
		t.Error("Requirement(3).MarshalText succeeded")
	}
}
