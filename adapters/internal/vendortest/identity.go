package vendortest

import (
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/conformancetest"
	"github.com/checkfu/checkfu/signing"
)

// Identities is what CheckIdentities needs of a vendor adapter.
type Identities struct {
	// Name is the vendor's name as the adapter is imported ("e2b").
	Name string
	// Identity and Worker are the adapter's two exact pairs.
	Identity, Worker checkfu.ProviderRevision
	// Capability is the adapter's advertisement.
	Capability admission.RunnerProviderCapability
	// Placement is where the adapter runs.
	Placement admission.Placement
}

// CheckIdentities is the identity test every vendor adapter runs: a
// complete, production, correctly signed receipt for the adapter's
// Identity certifies that exact pair and never the Worker pair, although
// the vendor and the revision number are the same; and the adapter's own
// advertisement caps it at advisory_filter.
func CheckIdentities(t *testing.T, v Identities) {
	t.Helper()
	if v.Identity.Revision != v.Worker.Revision || v.Identity.Provider == v.Worker.Provider {
		t.Fatalf("the two identities should share a revision and differ in provider: %s, %s", v.Identity, v.Worker)
	}
	signer, _, err := signing.GenerateSigner(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signing.ParseAttesterSet(conformancetest.AttesterSetFile(signer)) // a throwaway set, never the built-in one
	if err != nil {
		t.Fatal(err)
	}
	env, err := conformance.Sign(signer, conformance.Record{
		Target: v.Identity, Facts: conformance.AllFacts(), Label: checkfu.LabelProduction,
		IssuedAt: time.Unix(1_790_000_000, 0), Evidence: []conformance.Digest{conformance.DigestOf([]byte("matrix run"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := conformance.Verify(set, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.Certifies(v.Identity); err != nil {
		t.Fatalf("the receipt does not certify its own pair: %v", err)
	}
	if err := receipt.Certifies(v.Worker); !errors.Is(err, conformance.CodeProviderMismatch) {
		t.Errorf("a receipt for %s certifies %s: %v", v.Identity, v.Worker, err)
	}
	if _, err := conformance.Certify(set, env, v.Worker); err == nil {
		t.Errorf("Certify accepted the receipt for the worker revision")
	}
	// Even a provider advertising the boundary gains nothing for the
	// worker revision from the other identity's receipt.
	if g := conformance.EffectiveGrade(v.Worker, checkfu.SecurityBoundary, receipt); g != checkfu.AdvisoryFilter {
		t.Errorf("EffectiveGrade(worker) = %s, want advisory_filter", g)
	}
	if g := conformance.EffectiveGrade(v.Identity, checkfu.SecurityBoundary, receipt); g != checkfu.SecurityBoundary {
		t.Errorf("EffectiveGrade(own pair, advertising the boundary) = %s; the control is broken", g)
	}
	// And the vendor's own advertisement caps it: advisory_filter, receipt or not.
	if g := conformance.EffectiveGrade(v.Identity, v.Capability.EgressCertification, receipt); g != checkfu.AdvisoryFilter {
		t.Errorf("EffectiveGrade(%s, its capability) = %s, want advisory_filter", v.Name, g)
	}
}

// CheckCapability is the capability test every vendor adapter runs: the
// advertisement is well formed, graded advisory_filter, and claims no
// more than its placement allows.
func CheckCapability(t *testing.T, c admission.RunnerProviderCapability, placement admission.Placement) {
	t.Helper()
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.EgressCertification != checkfu.AdvisoryFilter {
		t.Errorf("grade %s, want advisory_filter", c.EgressCertification)
	}
	if err := admission.CheckPlacement(placement, c); err != nil {
		t.Errorf("the capability claims more than a remote provider may: %v", err)
	}
}
