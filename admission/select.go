package admission

import (
	"errors"
	"fmt"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/egress"
)

// A Candidate is one exact provider revision selection may choose.
type Candidate struct {
	// Target is the exact (provider, provider_revision) pair.
	Target checkfu.ProviderRevision
	// Advertised is the grade the provider advertises
	// (capabilities.egress_certification), after the enrollment ceiling.
	Advertised checkfu.Grade
	// NetworkPolicyAuthority is the provider's enforcement.network_policy
	// claim. The grade ignores it: provider_attested there says "I own my
	// configured filter", which certifies nothing.
	NetworkPolicyAuthority Authority
	// Receipt is the verified conformance receipt held for Target, or nil.
	Receipt *conformance.Receipt
}

// Grade returns the candidate's egress grade: conformance.EffectiveGrade
// of its exact pair, advertisement and receipt, and nothing else.
func (c Candidate) Grade() checkfu.Grade {
	return conformance.EffectiveGrade(c.Target, c.Advertised, c.Receipt)
}

// CheckEgress compares v's egress requirement with c's grade. It does no
// I/O and runs before any provider call. For an allowlist, an omitted
// requirement requires advisory_filter, so a provider graded unsupported
// is never selected; none and unrestricted declare no destination
// restriction and ignore the grade. A shortfall is refused with
// [CodeEgressCertificationUnsatisfied], naming required and actual.
func CheckEgress(v *Published, c Candidate) error {
	if !v.published() {
		return notPublished()
	}
	switch v.PolicyType() {
	case egress.PolicyNone, egress.PolicyUnrestricted:
		return nil
	case egress.PolicyAllowlist:
	default:
		return checkfu.Refuse(CodeProfileInvalid, "admission: published version has network policy %s", checkfu.Quote(string(v.PolicyType())))
	}
	req, got := v.Requirement(), c.Grade()
	if !req.SatisfiedBy(got) {
		return checkfu.Refuse(CodeEgressCertificationUnsatisfied,
			"admission: %s requires egress certification %s; %s is graded %s", checkfu.Quote(v.Name()), req.Min(), checkfu.Quote(c.Target.String()), got)
	}
	return nil
}

// A CandidateResult is one candidate's outcome in a selection.
type CandidateResult struct {
	// Target is the candidate's exact pair.
	Target checkfu.ProviderRevision
	// Grade is its effective grade (Candidate.Grade).
	Grade checkfu.Grade
	// Err is nil for a candidate that qualifies, else its refusal.
	Err error
}

// A Selection is the outcome of [Select]: the chosen exact pair and every
// candidate's reason.
type Selection struct {
	// Chosen is the selected candidate (zero when none qualified).
	Chosen Candidate
	// Candidates lists every candidate considered, in order.
	Candidates []CandidateResult
}

// Select returns the first candidate, in the caller's order, that passes
// [CheckEgress] for v. It never infers, upgrades or averages a grade. When
// none qualifies it refuses with [CodeProviderUnavailable]; the Selection
// it also returns lists each candidate's refusal, and when every refusal
// is [CodeEgressCertificationUnsatisfied] that code matches too.
func Select(v *Published, candidates []Candidate) (*Selection, error) {
	s := &Selection{}
	if !v.published() {
		return s, notPublished()
	}
	for _, c := range candidates {
		err := CheckEgress(v, c)
		s.Candidates = append(s.Candidates, CandidateResult{Target: c.Target, Grade: c.Grade(), Err: err})
		if err == nil {
			s.Chosen = c
			return s, nil
		}
	}
	var why []string
	var first *checkfu.Refusal
	for _, r := range s.Candidates {
		why = append(why, fmt.Sprintf("%s: %v", r.Target, r.Err))
		if first == nil {
			errors.As(r.Err, &first)
		}
	}
	if len(candidates) == 0 {
		why = append(why, "no candidate")
	}
	r := &checkfu.Refusal{Code: CodeProviderUnavailable,
		Message: fmt.Sprintf("admission: no provider revision can run %s (%s)", checkfu.Quote(v.Name()), strings.Join(why, "; "))}
	if first != nil { // a nil *Refusal as Err would be a non-nil error that panics when printed
		r.Err = first
	}
	return s, r
}

type candidatesJSON struct {
	Providers []candidateJSON `json:"providers"`
}

type candidateJSON struct {
	Provider            string        `json:"provider"`
	ProviderRevision    string        `json:"provider_revision"`
	EgressCertification checkfu.Grade `json:"egress_certification"`
	Enforcement         *Enforcement  `json:"enforcement,omitempty"`
}

// ParseCandidates reads a providers document strictly, for tools that
// select without an enrollment (checkfu profile select):
//
//	{"providers": [{"provider": "checkfu:docker-provider", "provider_revision": "3",
//	  "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}
//
// The candidates carry no receipt; attach verified ones before [Select].
// Refusals are [CodeCapabilityInvalid].
func ParseCandidates(doc []byte) ([]Candidate, error) {
	var cj candidatesJSON
	if err := strictUnmarshal(doc, &cj, CodeCapabilityInvalid, "providers"); err != nil {
		return nil, err
	}
	out := make([]Candidate, 0, len(cj.Providers))
	for _, p := range cj.Providers {
		if p.Provider == "" || p.ProviderRevision == "" {
			return nil, checkfu.Refuse(CodeCapabilityInvalid, "admission: providers: every entry needs provider and provider_revision")
		}
		c := Candidate{Target: checkfu.ProviderRevision{Provider: p.Provider, Revision: p.ProviderRevision}, Advertised: p.EgressCertification}
		if p.Enforcement != nil {
			c.NetworkPolicyAuthority = p.Enforcement[AxisNetworkPolicy]
		}
		out = append(out, c)
	}
	return out, nil
}
