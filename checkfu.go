package checkfu

import (
	"errors"
	"fmt"
	"strings"
)

// A Code is the stable, snake_case identifier of why something was refused,
// such as "no_rule_matched" or "signature_invalid". Codes are part of the
// API: they never change meaning once published.
//
// A Code is itself an error so that it can serve as the sentinel for
// errors.Is: errors.Is(err, egress.CodeNoRuleMatched) reports whether err is
// (or wraps) a [*Refusal] with that code.
type Code string

// Error returns the code itself.
func (c Code) Error() string { return string(c) }

// A Refusal is a typed "no": the action was understood and deliberately not
// performed. It is distinct from a failure of something upstream (a dial
// error, a broken store), which packages report with their own error types,
// so that a policy denial is never mistaken for an outage and vice versa.
//
// Message is for humans and must never contain secret material. Err, when
// set, is an underlying cause that is safe to show (it is returned by
// Unwrap).
type Refusal struct {
	Code    Code
	Message string
	Err     error
}

// Refuse returns a Refusal with the given code and a message formatted
// with fmt.Sprintf. Arguments must not carry secrets.
func Refuse(code Code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns "refused: CODE: MESSAGE".
func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("refused: ")
	b.WriteString(string(r.Code))
	if r.Message != "" {
		b.WriteString(": ")
		b.WriteString(r.Message)
	}
	if r.Err != nil {
		b.WriteString(": ")
		b.WriteString(r.Err.Error())
	}
	return b.String()
}

// Is reports whether target is the Code of r, so that errors.Is(err, code)
// works for every Refusal in a chain.
func (r *Refusal) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == r.Code
}

// Unwrap returns the underlying cause, if any.
func (r *Refusal) Unwrap() error { return r.Err }

// CodeOf returns the Code of the first Refusal in err's chain, and false
// when err holds no Refusal.
func CodeOf(err error) (Code, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Code, true
	}
	return "", false
}

// A Grade is the egress certification of one exact provider revision: how
// far its claim to restrict workload egress can be trusted. Grades form a
// total order, Unsupported < AdvisoryFilter < SecurityBoundary.
//
// A grade is never inferred, upgraded or averaged. Only a verified
// conformance receipt (package conformance) can place a provider revision
// at SecurityBoundary; a provider's own advertisement cannot.
type Grade uint8

const (
	// Unsupported means the provider applies no restriction of its own.
	// It is the zero value.
	Unsupported Grade = iota
	// AdvisoryFilter means a filter runs alongside the workload: it stops
	// a confused agent, not a determined one.
	AdvisoryFilter
	// SecurityBoundary means the provider revision holds all five
	// conformance facts, proved by a matrix Checkfu runs and attested by a
	// reviewed key.
	SecurityBoundary
)

var gradeNames = [...]string{
	Unsupported:      "unsupported",
	AdvisoryFilter:   "advisory_filter",
	SecurityBoundary: "security_boundary",
}

// ParseGrade parses the snake_case text form of a grade. Anything but
// exactly "unsupported", "advisory_filter" or "security_boundary" is an
// error with code [CodeGradeInvalid].
func ParseGrade(s string) (Grade, error) {
	for g, name := range gradeNames {
		if s == name {
			return Grade(g), nil
		}
	}
	return Unsupported, Refuse(CodeGradeInvalid, "%q is not a grade (want unsupported, advisory_filter or security_boundary)", s)
}

// Valid reports whether g is one of the three grades.
func (g Grade) Valid() bool { return int(g) < len(gradeNames) }

// String returns the snake_case text form of g, or "grade(N)" for a value
// outside the three grades.
func (g Grade) String() string {
	if !g.Valid() {
		return fmt.Sprintf("grade(%d)", uint8(g))
	}
	return gradeNames[g]
}

// AtLeast reports whether g is min or stronger. An invalid grade is at
// least nothing.
func (g Grade) AtLeast(min Grade) bool {
	return g.Valid() && min.Valid() && g >= min
}

// MarshalText implements encoding.TextMarshaler. It refuses invalid grades.
func (g Grade) MarshalText() ([]byte, error) {
	if !g.Valid() {
		return nil, Refuse(CodeGradeInvalid, "grade(%d) is not a grade", uint8(g))
	}
	return []byte(gradeNames[g]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseGrade].
func (g *Grade) UnmarshalText(text []byte) error {
	v, err := ParseGrade(string(text))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// A Requirement is what a SandboxProfile's allowlist policy demands of a
// provider's grade (required_egress_certification). Its only values are the
// zero Requirement, RequireAdvisoryFilter and RequireSecurityBoundary: a
// policy may not ask for Unsupported.
//
// The zero Requirement means the field was omitted. An omitted requirement
// is satisfied exactly by AdvisoryFilter or better: an allowlist policy that
// names nothing still requires advisory_filter, never unsupported. A value
// outside the three (a conversion from an arbitrary integer) is satisfied by
// nothing.
type Requirement uint8

const (
	// RequireAdvisoryFilter demands AdvisoryFilter or better.
	RequireAdvisoryFilter = Requirement(AdvisoryFilter)
	// RequireSecurityBoundary demands SecurityBoundary.
	RequireSecurityBoundary = Requirement(SecurityBoundary)
)

// ParseRequirement parses "advisory_filter" or "security_boundary". Any
// other text, including "unsupported" and the empty string, is an error
// with code [CodeGradeInvalid]; an omitted field is the zero Requirement,
// not a spelling.
func ParseRequirement(s string) (Requirement, error) {
	g, err := ParseGrade(s)
	if err != nil {
		return 0, err
	}
	if g == Unsupported {
		return 0, Refuse(CodeGradeInvalid, "a policy may not require %q (want advisory_filter or security_boundary)", s)
	}
	return Requirement(g), nil
}

// IsZero reports whether r is the omitted requirement.
func (r Requirement) IsZero() bool { return r == 0 }

// Valid reports whether r is the omitted requirement or one of the two
// requirements a policy may state.
func (r Requirement) Valid() bool { return r <= RequireSecurityBoundary }

// Min returns the weakest grade that satisfies r: AdvisoryFilter for the
// zero Requirement. For an invalid r it returns an invalid Grade, which no
// grade is at least.
func (r Requirement) Min() Grade {
	if r == 0 {
		return AdvisoryFilter
	}
	return Grade(r)
}

// SatisfiedBy reports whether a provider revision graded g meets r.
func (r Requirement) SatisfiedBy(g Grade) bool { return g.AtLeast(r.Min()) }

// String returns the text form of r, "" for the omitted requirement, or
// "requirement(N)" for an invalid value.
func (r Requirement) String() string {
	switch {
	case r.IsZero():
		return ""
	case !r.Valid():
		return fmt.Sprintf("requirement(%d)", uint8(r))
	}
	return Grade(r).String()
}

// MarshalText implements encoding.TextMarshaler. The omitted requirement
// marshals as empty text (use omitempty or omitzero to leave it out); an
// invalid value is an error.
func (r Requirement) MarshalText() ([]byte, error) {
	if !r.Valid() {
		return nil, Refuse(CodeGradeInvalid, "requirement(%d) is not a requirement", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with
// [ParseRequirement]. Empty text is refused: omit the field instead.
func (r *Requirement) UnmarshalText(text []byte) error {
	v, err := ParseRequirement(string(text))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// A ProviderRevision names one exact revision of one provider adapter, such
// as {"checkfu:daytona-provider", "2"}. Grades and receipts attach to the
// exact pair: two ProviderRevisions are the same only when both fields are
// byte-for-byte equal. There is no prefix, semver or wildcard matching.
type ProviderRevision struct {
	Provider string
	Revision string
}

// String returns "provider@revision".
func (p ProviderRevision) String() string { return p.Provider + "@" + p.Revision }

// A Label says how a piece of evidence was produced. Mock, isolated and
// production evidence are always kept apart; only production evidence can
// certify anything. The zero Label is LabelMock, so unlabelled evidence is
// never mistaken for real.
type Label uint8

const (
	// LabelMock marks evidence from fakes and in-process doubles.
	LabelMock Label = iota
	// LabelIsolated marks evidence from a real provider in an isolated
	// test topology the test built itself.
	LabelIsolated
	// LabelProduction marks evidence from a production provider.
	LabelProduction
)

var labelNames = [...]string{
	LabelMock:       "mock",
	LabelIsolated:   "isolated",
	LabelProduction: "production",
}

// ParseLabel parses exactly "mock", "isolated" or "production".
func ParseLabel(s string) (Label, error) {
	for l, name := range labelNames {
		if s == name {
			return Label(l), nil
		}
	}
	return LabelMock, Refuse(CodeLabelInvalid, "%q is not an evidence label (want mock, isolated or production)", s)
}

// Valid reports whether l is one of the three labels.
func (l Label) Valid() bool { return int(l) < len(labelNames) }

// String returns the text form of l, or "label(N)" for an invalid value.
func (l Label) String() string {
	if !l.Valid() {
		return fmt.Sprintf("label(%d)", uint8(l))
	}
	return labelNames[l]
}

// MarshalText implements encoding.TextMarshaler. It refuses invalid labels.
func (l Label) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, Refuse(CodeLabelInvalid, "label(%d) is not an evidence label", uint8(l))
	}
	return []byte(labelNames[l]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseLabel].
func (l *Label) UnmarshalText(text []byte) error {
	v, err := ParseLabel(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
