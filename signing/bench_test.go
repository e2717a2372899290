package signing

import (
	"crypto/ed25519"
	"testing"
)

// BenchmarkAdmitKey measures the once-per-key admission work that strict
// verification does not repeat.
func BenchmarkAdmitKey(b *testing.B) {
	pub := testPriv(1).Public().(ed25519.PublicKey)
	for b.Loop() {
		if _, err := ParsePublicKey(pub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvelopeOverhead measures the envelope path without the
// signature check (envelope scan, base64, PAE, small-order R lookup),
// part of what strict receipt verification adds to a bare
// crypto/ed25519.Verify; conformance's BenchmarkVerify measures the whole.
func BenchmarkEnvelopeOverhead(b *testing.B) {
	env := mustSign(b, testSigner(1), make([]byte, 200))
	b.ReportAllocs()
	for b.Loop() {
		e, err := parseEnvelope(env)
		if err != nil {
			b.Fatal(err)
		}
		if e.payloadType != testType || smallOrderR(e.sig[:32]) || len(pae(e.payloadType, e.payload)) == 0 {
			b.Fatal("bad envelope")
		}
	}
}
