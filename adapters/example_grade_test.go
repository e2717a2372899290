package adapters_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// A provider's own advertisement never reaches security_boundary, and a
// receipt raises it only when it certifies the exact pair from
// production evidence: a signed receipt of mock evidence certifies
// nothing.
func ExampleGrade() {
	d := adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"},
		MaterializationRevision: "vm-7",
		Placement:               admission.PlacementRemote,
	}
	d.Capability.EgressCertification = checkfu.SecurityBoundary
	fmt.Println(adapters.Grade(d, nil))

	attester, _, _ := signing.GenerateSigner(nil)
	set, _ := json.Marshal(map[string]any{"attesters": []map[string]string{
		{"name": "matrix", "public_key_pem": string(attester.PublicKeyPEM())}}})
	attesters, _ := signing.ParseAttesterSet(set)
	env, _ := conformance.Sign(attester, conformance.Record{Target: d.Identity, Facts: conformance.AllFacts(),
		Label: checkfu.LabelMock, IssuedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Evidence: []conformance.Digest{conformance.DigestOf([]byte("a mock run"))}})
	receipt, err := conformance.Verify(attesters, env)
	fmt.Println(err, adapters.Grade(d, receipt))
	// Output:
	// advisory_filter
	// <nil> advisory_filter
}
