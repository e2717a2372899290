package conformance

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/checkfu/checkfu/signing"
)

// BenchmarkVerify compares, in one run, bare crypto/ed25519.Verify with
// strict verification under a pre-admitted key (the target is >= 85% of
// the bare rate) and with the whole receipt path (envelope JSON, base64,
// PAE, strict verify, record parse and re-encode). All three verify the
// same signature over the same PAE bytes.
func BenchmarkVerify(b *testing.B) {
	a := testSigner(1)
	set := testSet(b, a)
	env := mustSign(b, a, goodRecord())
	payload := mustPayload(b, func() Record { r := goodRecord(); r.Attester = a.KeyID(); return r }())
	msg := pae(PayloadType, payload)
	pub := testPriv(1).Public().(ed25519.PublicKey)
	var e struct{ sig []byte }
	e.sig = ed25519.Sign(testPriv(1), msg) // Ed25519 is deterministic: the receipt's own signature
	k, err := signing.ParsePublicKey(pub)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if !ed25519.Verify(pub, msg, e.sig) {
				b.Fatal("bare verify failed")
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			if !k.Verify(msg, e.sig) {
				b.Fatal("strict verify failed")
			}
		}
	})
	// interleaved alternates bare and strict in one loop so that both see
	// the same machine noise, and reports each rate as a fraction of the
	// bare rate (bare ns / other ns; 1.0 = as fast as bare).
	b.Run("interleaved", func(b *testing.B) {
		var bare, strict, receipt time.Duration
		for b.Loop() {
			t0 := time.Now()
			ok := ed25519.Verify(pub, msg, e.sig)
			t1 := time.Now()
			ok = k.Verify(msg, e.sig) && ok
			t2 := time.Now()
			_, err := Verify(set, env)
			t3 := time.Now()
			if !ok || err != nil {
				b.Fatal("verify failed")
			}
			bare, strict, receipt = bare+t1.Sub(t0), strict+t2.Sub(t1), receipt+t3.Sub(t2)
		}
		b.ReportMetric(float64(bare)/float64(strict), "strict-rate/bare-rate")
		b.ReportMetric(float64(bare)/float64(receipt), "receipt-rate/bare-rate")
	})
	b.Run("receipt", func(b *testing.B) {
		for b.Loop() {
			if _, err := Verify(set, env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
