package checkfu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
)

// A package declares its refusal codes as constants; callers branch on
// them with errors.Is, however deeply the refusal is wrapped.
func ExampleRefuse() {
	const CodeQuotaExhausted checkfu.Code = "quota_exhausted"
	err := fmt.Errorf("sending the request: %w",
		checkfu.Refuse(CodeQuotaExhausted, "lease %q has no budget left", "lease-7"))

	fmt.Println(errors.Is(err, CodeQuotaExhausted))
	fmt.Println(err)
	// Output:
	// true
	// sending the request: refused: quota_exhausted: lease "lease-7" has no budget left
}

// CodeOf tells a refusal from a failure: an outage carries no code.
func ExampleCodeOf() {
	for _, err := range []error{
		checkfu.Refuse("no_rule_matched", "no rule permits GET example.com/"),
		errors.New("dial tcp 198.18.0.7:443: connection refused"),
	} {
		code, refused := checkfu.CodeOf(err)
		fmt.Printf("refused=%v code=%q\n", refused, code)
	}
	// Output:
	// refused=true code="no_rule_matched"
	// refused=false code=""
}

// Grades parse strictly and compare in their total order.
func ExampleParseGrade() {
	g, err := checkfu.ParseGrade("advisory_filter")
	if err != nil {
		panic(err)
	}
	fmt.Println(g.AtLeast(checkfu.Unsupported), g.AtLeast(checkfu.SecurityBoundary))

	_, err = checkfu.ParseGrade("Security_Boundary")
	fmt.Println(errors.Is(err, checkfu.CodeGradeInvalid))
	// Output:
	// true false
	// true
}

// An omitted requirement is satisfied by advisory_filter or better, never
// by unsupported; a policy may not ask for unsupported at all.
func ExampleRequirement_SatisfiedBy() {
	var policy struct {
		Requires checkfu.Requirement `json:"requires,omitzero"`
	}
	if err := json.Unmarshal([]byte(`{}`), &policy); err != nil {
		panic(err)
	}
	for _, g := range []checkfu.Grade{checkfu.Unsupported, checkfu.AdvisoryFilter, checkfu.SecurityBoundary} {
		fmt.Printf("%s: %v\n", g, policy.Requires.SatisfiedBy(g))
	}

	err := json.Unmarshal([]byte(`{"requires":"unsupported"}`), &policy)
	fmt.Println(errors.Is(err, checkfu.CodeGradeInvalid))
	// Output:
	// unsupported: false
	// advisory_filter: true
	// security_boundary: true
	// true
}

// The zero Label is mock: evidence nobody labelled is never taken for real.
func ExampleLabel() {
	var unlabelled checkfu.Label
	fmt.Println(unlabelled)

	l, err := checkfu.ParseLabel("production")
	fmt.Println(l, err)
	// Output:
	// mock
	// production <nil>
}

// Grades attach to an exact provider revision, never to a name.
func ExampleProviderRevision() {
	certified := checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: "2"}
	for _, p := range []checkfu.ProviderRevision{
		{Provider: "checkfu:daytona-provider", Revision: "2"},
		{Provider: "checkfu:daytona-provider", Revision: "3"},
		{Provider: "checkfu:daytona-worker-provider", Revision: "2"},
	} {
		fmt.Println(p, p == certified)
	}
	// Output:
	// checkfu:daytona-provider@2 true
	// checkfu:daytona-provider@3 false
	// checkfu:daytona-worker-provider@2 false
}

// A requirement names a grade a policy asks for: advisory_filter or
// security_boundary. Asking for unsupported is not a requirement.
func ExampleParseRequirement() {
	r, err := checkfu.ParseRequirement("security_boundary")
	fmt.Println(r.SatisfiedBy(checkfu.AdvisoryFilter), r.SatisfiedBy(checkfu.SecurityBoundary), err)

	for _, s := range []string{"unsupported", ""} {
		_, err := checkfu.ParseRequirement(s)
		fmt.Println(errors.Is(err, checkfu.CodeGradeInvalid))
	}
	// Output:
	// false true <nil>
	// true
	// true
}

// Labels parse exactly: no case folding, no trimming, no aliases.
func ExampleParseLabel() {
	for _, s := range []string{"isolated", "Production", "prod"} {
		l, err := checkfu.ParseLabel(s)
		fmt.Println(l, errors.Is(err, checkfu.CodeLabelInvalid))
	}
	// Output:
	// isolated false
	// mock true
	// mock true
}

// Plane code carries the request context in the Go context; an invalid
// context is not attached, so a hop that finds none fails closed.
func ExampleWithRequestContext() {
	rc := checkfu.RequestContext{Actor: "user-1", Tenant: "acme", Workspace: "ws-1",
		Session: "s-1", Request: "req-1", Release: "r-2026-12"}
	ctx := checkfu.WithRequestContext(context.Background(), rc)
	got, ok := checkfu.RequestContextFrom(ctx)
	fmt.Println(got.Actor, got.Request, ok)

	ctx = checkfu.WithRequestContext(context.Background(), checkfu.RequestContext{Actor: "user-1"})
	_, ok = checkfu.RequestContextFrom(ctx)
	fmt.Println(ok)
	// Output:
	// user-1 req-1 true
	// false
}
