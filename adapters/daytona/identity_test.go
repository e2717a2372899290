package daytona_test

import (
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/conformancetest"
)

// TestWorkerRevisionIsSeparateIdentity: a complete, production,
// correctly signed receipt for checkfu:daytona-provider@N certifies that
// exact pair and never checkfu:daytona-worker-provider@N, although the
// vendor and the revision number are the same.
func TestWorkerRevisionIsSeparateIdentity(t *testing.T) {
	if daytona.Identity.Revision != daytona.WorkerIdentity.Revision || daytona.Identity.Provider == daytona.WorkerIdentity.Provider {
		t.Fatalf("the two identities should share a revision and differ in provider: %s, %s", daytona.Identity, daytona.WorkerIdentity)
	}
	signer, _, err := conformance.GenerateSigner(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, err := conformance.ParseAttesterSet(conformancetest.AttesterSetFile(signer)) // a throwaway set, never the built-in one
	if err != nil {
		t.Fatal(err)
	}
	env, err := signer.Sign(conformance.Record{
		Target: daytona.Identity, Facts: conformance.AllFacts(), Label: checkfu.LabelProduction,
		IssuedAt: time.Unix(1_790_000_000, 0), Evidence: []conformance.Digest{conformance.DigestOf([]byte("matrix run"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := set.Verify(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.Certifies(daytona.Identity); err != nil {
		t.Fatalf("the receipt does not certify its own pair: %v", err)
	}
	if err := receipt.Certifies(daytona.WorkerIdentity); !errors.Is(err, conformance.CodeProviderMismatch) {
		t.Errorf("a receipt for %s certifies %s: %v", daytona.Identity, daytona.WorkerIdentity, err)
	}
	if _, err := set.Certify(env, daytona.WorkerIdentity); err == nil {
		t.Errorf("Certify accepted the receipt for the worker revision")
	}
	// Even a provider advertising the boundary gains nothing for the
	// worker revision from the other identity's receipt.
	if g := conformance.EffectiveGrade(daytona.WorkerIdentity, checkfu.SecurityBoundary, receipt); g != checkfu.AdvisoryFilter {
		t.Errorf("EffectiveGrade(worker) = %s, want advisory_filter", g)
	}
	if g := conformance.EffectiveGrade(daytona.Identity, checkfu.SecurityBoundary, receipt); g != checkfu.SecurityBoundary {
		t.Errorf("EffectiveGrade(own pair, advertising the boundary) = %s; the control is broken", g)
	}
	// And Daytona's own advertisement caps it: advisory_filter, receipt or not.
	if g := conformance.EffectiveGrade(daytona.Identity, daytona.Capability().EgressCertification, receipt); g != checkfu.AdvisoryFilter {
		t.Errorf("EffectiveGrade(daytona, its capability) = %s, want advisory_filter", g)
	}
}

func TestCapabilityIsHonest(t *testing.T) {
	c := daytona.Capability()
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.EgressCertification != checkfu.AdvisoryFilter {
		t.Errorf("grade %s, want advisory_filter", c.EgressCertification)
	}
	if err := admission.CheckPlacement(daytona.Placement, c); err != nil {
		t.Errorf("the capability claims more than a remote provider may: %v", err)
	}
}
