package admissiontest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// Signer returns a deterministic test signer derived from name.
func Signer(t testing.TB, name string) *signing.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte("admissiontest:" + name))
	s, _, err := signing.GenerateSigner(bytes.NewReader(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// KeySet returns an attester-style key set naming each signer by its
// name: enrolled provider keys, or deployment keys.
func KeySet(t testing.TB, names ...string) *signing.AttesterSet {
	t.Helper()
	type entry struct {
		Name         string `json:"name"`
		PublicKeyPEM string `json:"public_key_pem"`
	}
	var es []entry
	for _, n := range names {
		es = append(es, entry{n, string(Signer(t, n).PublicKeyPEM())})
	}
	b, err := json.Marshal(map[string][]entry{"attesters": es})
	if err != nil {
		t.Fatal(err)
	}
	set, err := signing.ParseAttesterSet(b)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Capability returns a capability that can do everything on every axis,
// with each enforcement axis at authority a and the given grade.
func Capability(a admission.Authority, g checkfu.Grade) admission.RunnerProviderCapability {
	var e admission.Enforcement
	for i := range e {
		e[i] = a
	}
	return admission.RunnerProviderCapability{
		Drivers: []string{"docker"}, LaunchKinds: []string{"process"}, Tiers: []string{"standard"},
		Platforms: []string{"linux/amd64"}, NetworkModes: []string{"allowlist", "none", "unrestricted"},
		RetentionModes: []string{"standard", "zero"}, MountKinds: []string{"memory", "project"},
		RuntimeAssurances: []string{"gvisor"}, SnapshotClone: true, SnapshotCustody: []string{"plane"},
		PackageMaterialization: []string{"build"}, Enforcement: e, EgressCertification: g,
		ImageModes: []string{"derived"}, FixedBaseImages: []string{"sha256:" + string(bytes.Repeat([]byte("0"), 64))},
		PackageManagers: []string{"apt", "cargo", "gem", "go", "npm", "pip"}, Snapshots: true, ListDir: true,
	}
}

// Enroll enrolls target at placement with declared and ceiling, signing
// the materialization statement with the test key named target.Provider
// and trusting exactly that key. It fails the test on a refusal.
func Enroll(t testing.TB, target checkfu.ProviderRevision, placement admission.Placement, declared, ceiling admission.RunnerProviderCapability) *admission.Enrollment {
	t.Helper()
	e, err := admission.Enroll(Request(t, target, placement, declared, ceiling))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Request returns the enrollment request Enroll uses, for tests that
// alter it before calling admission.Enroll.
func Request(t testing.TB, target checkfu.ProviderRevision, placement admission.Placement, declared, ceiling admission.RunnerProviderCapability) admission.EnrollmentRequest {
	t.Helper()
	return admission.EnrollmentRequest{Target: target, Placement: placement, Declared: declared, Ceiling: ceiling,
		Statement: Statement(t, target.Provider, target, placement, declared), Signers: KeySet(t, target.Provider)}
}

// Statement returns a materialization statement for target, placement and
// declared, signed by the test key named signer.
func Statement(t testing.TB, signer string, target checkfu.ProviderRevision, placement admission.Placement, declared admission.RunnerProviderCapability) []byte {
	t.Helper()
	d, err := admission.CapabilityDigest(declared)
	if err != nil {
		t.Fatal(err)
	}
	env, err := admission.SignMaterialization(Signer(t, signer), admission.MaterializationStatement{
		Provider: target.Provider, ProviderRevision: target.Revision, MaterializationRevision: "m1",
		Placement: placement, CapabilityDigest: d, IssuedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Receipt returns a verified receipt certifying target at
// security_boundary, signed by the test attester "matrix", and the
// attester set that trusts it.
func Receipt(t testing.TB, target checkfu.ProviderRevision) (*conformance.Receipt, *signing.AttesterSet) {
	t.Helper()
	s := Signer(t, "matrix")
	env, err := conformance.Sign(s, conformance.Record{Target: target, Facts: conformance.AllFacts(), Label: checkfu.LabelProduction,
		IssuedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Evidence: []conformance.Digest{conformance.DigestOf([]byte("evidence"))}})
	if err != nil {
		t.Fatal(err)
	}
	set := KeySet(t, "matrix")
	r, err := conformance.Verify(set, env)
	if err != nil {
		t.Fatal(err)
	}
	return r, set
}
