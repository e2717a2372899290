package admissiontest_test

import (
	"bytes"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

// TestSignerIsAFunctionOfItsName pins the package doc's first invariant:
// the same name gives the same key, different names different keys.
func TestSignerIsAFunctionOfItsName(t *testing.T) {
	a1, a2, b := admissiontest.Signer(t, "a"), admissiontest.Signer(t, "a"), admissiontest.Signer(t, "b")
	if !bytes.Equal(a1.PublicKeyPEM(), a2.PublicKeyPEM()) || a1.KeyID() != a2.KeyID() {
		t.Errorf("Signer(a) twice gave keys %v and %v, want one key", a1.KeyID(), a2.KeyID())
	}
	if bytes.Equal(a1.PublicKeyPEM(), b.PublicKeyPEM()) || a1.KeyID() == b.KeyID() {
		t.Errorf("Signer(a) and Signer(b) both gave key %v, want two keys", a1.KeyID())
	}
}

// TestHelpersReturnAcceptedValues pins that what the helpers return is
// what admission and conformance accepted: the enrollment is of the
// target at the placement, and the receipt certifies the target.
func TestHelpersReturnAcceptedValues(t *testing.T) {
	target := checkfu.ProviderRevision{Provider: "checkfu:test-provider", Revision: "1"}
	c := admissiontest.Capability(admission.ProviderAttested, checkfu.SecurityBoundary)
	e := admissiontest.Enroll(t, target, admission.PlacementRemote, c, c)
	if e.Target() != target || e.Placement() != admission.PlacementRemote {
		t.Errorf("Enroll = %v at %v, want %v at %v", e.Target(), e.Placement(), target, admission.PlacementRemote)
	}
	r, _ := admissiontest.Receipt(t, target)
	if err := r.Certifies(target); err != nil {
		t.Errorf("Receipt(%v).Certifies = %v, want nil", target, err)
	}
}
