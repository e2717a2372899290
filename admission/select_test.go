package admission_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

var (
	pairA = checkfu.ProviderRevision{Provider: "checkfu:docker-provider", Revision: "3"}
	pairB = checkfu.ProviderRevision{Provider: "partner:vm-provider", Revision: "7"}
)

const (
	allowNoReq    = `{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`
	allowAdvisory = `{"type": "allowlist", "allowed_hosts": ["api.example.com"], "required_egress_certification": "advisory_filter"}`
	allowBoundary = `{"type": "allowlist", "allowed_hosts": ["api.example.com"], "required_egress_certification": "security_boundary"}`
)

func TestCheckEgress(t *testing.T) {
	receipt, _ := admissiontest.Receipt(t, pairA)
	otherReceipt, _ := admissiontest.Receipt(t, checkfu.ProviderRevision{Provider: pairA.Provider, Revision: "4"})
	tests := []struct {
		name   string
		policy string
		c      admission.Candidate
		ok     bool
	}{
		{"no requirement, advisory", allowNoReq, admission.Candidate{Target: pairA, Advertised: checkfu.AdvisoryFilter}, true},
		{"no requirement, unsupported", allowNoReq, admission.Candidate{Target: pairA, Advertised: checkfu.Unsupported}, false},
		{"advisory, unsupported", allowAdvisory, admission.Candidate{Target: pairA, Advertised: checkfu.Unsupported}, false},
		{"boundary, advertised only", allowBoundary, admission.Candidate{Target: pairA, Advertised: checkfu.SecurityBoundary}, false},
		{"boundary, receipt for another revision", allowBoundary, admission.Candidate{Target: pairA, Advertised: checkfu.SecurityBoundary, Receipt: otherReceipt}, false},
		{"boundary, receipt but advertises advisory", allowBoundary, admission.Candidate{Target: pairA, Advertised: checkfu.AdvisoryFilter, Receipt: receipt}, false},
		{"boundary, receipt", allowBoundary, admission.Candidate{Target: pairA, Advertised: checkfu.SecurityBoundary, Receipt: receipt}, true},
		{"none ignores the grade", `{"type": "none"}`, admission.Candidate{Target: pairA, Advertised: checkfu.Unsupported}, true},
		{"unrestricted ignores the grade", `{"type": "unrestricted"}`, admission.Candidate{Target: pairA, Advertised: checkfu.Unsupported}, true},
	}
	for _, tt := range tests {
		v := mustPublish(t, nil, profileDoc("", tt.policy))
		err := admission.CheckEgress(v, tt.c)
		if tt.ok {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		wantCode(t, tt.name, err, admission.CodeEgressCertificationUnsatisfied)
		if err != nil && (!strings.Contains(err.Error(), "requires egress certification") || !strings.Contains(err.Error(), "graded "+tt.c.Grade().String())) {
			t.Errorf("%s: %v does not name required and actual", tt.name, err)
		}
	}
}

// TestGradeIgnoresNetworkPolicyAuthority pins that the grade cannot be
// back-derived from enforcement.network_policy.
func TestGradeIgnoresNetworkPolicyAuthority(t *testing.T) {
	v := mustPublish(t, nil, profileDoc("", allowBoundary))
	for _, adv := range []checkfu.Grade{checkfu.Unsupported, checkfu.AdvisoryFilter, checkfu.SecurityBoundary} {
		base := admission.Candidate{Target: pairB, Advertised: adv}
		for _, a := range []admission.Authority{admission.Unenforced, admission.ProviderAttested, admission.RunnerEnforced} {
			c := base
			c.NetworkPolicyAuthority = a
			if c.Grade() != base.Grade() {
				t.Errorf("advertised %s: network_policy %s moves the grade to %s", adv, a, c.Grade())
			}
			if err := admission.CheckEgress(v, c); !errors.Is(err, admission.CodeEgressCertificationUnsatisfied) {
				t.Errorf("advertised %s, network_policy %s: %v", adv, a, err)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	v := mustPublish(t, nil, profileDoc("", allowNoReq))
	s, err := admission.Select(v, []admission.Candidate{
		{Target: pairB, Advertised: checkfu.Unsupported},
		{Target: pairA, Advertised: checkfu.AdvisoryFilter},
	})
	if err != nil || s.Chosen.Target != pairA || len(s.Candidates) != 2 || s.Candidates[0].Err == nil {
		t.Fatalf("Select = %+v, %v", s, err)
	}
	_, err = admission.Select(v, []admission.Candidate{{Target: pairB, Advertised: checkfu.Unsupported}})
	wantCode(t, "only unsupported", err, admission.CodeProviderUnavailable)
	wantCode(t, "only unsupported (cause)", err, admission.CodeEgressCertificationUnsatisfied)
	_, err = admission.Select(v, nil)
	wantCode(t, "no candidate", err, admission.CodeProviderUnavailable)
}

// TestSelectWithoutCandidates: with no candidate (the providers document
// {} or {"providers": []}), Select refuses provider_unavailable with an
// error that prints and unwraps to nothing, rather than wrapping a nil
// *Refusal that panics when printed.
func TestSelectWithoutCandidates(t *testing.T) {
	v := mustPublish(t, nil, profileDoc("", allowNoReq))
	for _, doc := range []string{`{}`, `{"providers": []}`} {
		cs, err := admission.ParseCandidates([]byte(doc))
		if err != nil {
			t.Fatalf("ParseCandidates(%s): %v", doc, err)
		}
		_, err = admission.Select(v, cs)
		wantCode(t, doc, err, admission.CodeProviderUnavailable)
		if u := errors.Unwrap(err); u != nil {
			t.Errorf("%s: Select's refusal wraps %#v, want nothing", doc, u)
		}
		if !strings.Contains(fmt.Sprint(err), "no candidate") {
			t.Errorf("%s: Select = %v", doc, err)
		}
	}
}
