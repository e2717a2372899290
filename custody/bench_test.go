package custody

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// BenchmarkSealOpen measures one seal plus one open through the Keyset
// (public API: binding validation on each call, the Secret's lock, subkey
// lookup, header, length-prefixed AD, nonce, a Secret for the result and
// Destroy zeroing it) against the bare XChaCha20-Poly1305 AEAD doing the
// same AEAD work in the same run: a random 24-byte nonce from crypto/rand,
// associated data of the same length, a seal into one buffer and an open
// into a fresh one. The target is custody throughput >= 90% of bare
// (docs/benchmarks/custody.md).
func BenchmarkSealOpen(b *testing.B) {
	binding := Binding{Namespace: "acme-corp", Integration: "github", Handle: NewHandle()}
	ad := appendAD(nil, binding, 1)
	for _, size := range []int{32, 256, 4096} {
		plain := make([]byte, size)
		_, _ = rand.Read(plain)
		b.Run(fmt.Sprintf("size=%d/bare", size), func(b *testing.B) {
			key := make([]byte, chacha20poly1305.KeySize)
			_, _ = rand.Read(key)
			a, err := chacha20poly1305.NewX(key)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				nonce := make([]byte, chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX+size+16)
				_, _ = rand.Read(nonce)
				sealed := a.Seal(nonce, nonce, plain, ad)
				out, err := a.Open(nil, sealed[:chacha20poly1305.NonceSizeX], sealed[chacha20poly1305.NonceSizeX:], ad)
				if err != nil || len(out) != size {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("size=%d/custody", size), func(b *testing.B) {
			ks := GenerateKeyset()
			s := NewSecret(append([]byte(nil), plain...))
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				sealed, err := ks.Seal(binding, s)
				if err != nil {
					b.Fatal(err)
				}
				out, err := ks.Open(binding, sealed)
				if err != nil {
					b.Fatal(err)
				}
				out.Destroy()
			}
		})
	}
}

// BenchmarkSealOpenRatio interleaves blocks of bare and custody seal+open
// operations (the work of BenchmarkSealOpen) so that both see the same
// machine load (the build machine is shared and noisy), alternating which
// side runs first, and reports custody throughput as a fraction of bare:
// "ratio-sum" over all blocks and "ratio-best" between the fastest block
// of each. The target is >= 0.90.
func BenchmarkSealOpenRatio(b *testing.B) {
	binding := Binding{Namespace: "acme-corp", Integration: "github", Handle: NewHandle()}
	ad := appendAD(nil, binding, 1)
	for _, size := range []int{32, 256, 4096} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			plain := make([]byte, size)
			_, _ = rand.Read(plain)
			key := make([]byte, chacha20poly1305.KeySize)
			_, _ = rand.Read(key)
			a, err := chacha20poly1305.NewX(key)
			if err != nil {
				b.Fatal(err)
			}
			bare := func() {
				nonce := make([]byte, chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX+size+16)
				_, _ = rand.Read(nonce)
				sealed := a.Seal(nonce, nonce, plain, ad)
				if _, err := a.Open(nil, sealed[:chacha20poly1305.NonceSizeX], sealed[chacha20poly1305.NonceSizeX:], ad); err != nil {
					b.Fatal(err)
				}
			}
			ks := GenerateKeyset()
			s := NewSecret(append([]byte(nil), plain...))
			custody := func() {
				sealed, err := ks.Seal(binding, s)
				if err != nil {
					b.Fatal(err)
				}
				out, err := ks.Open(binding, sealed)
				if err != nil {
					b.Fatal(err)
				}
				out.Destroy()
			}
			const block = 64
			var sumBare, sumCustody time.Duration
			bestBare, bestCustody := time.Duration(1<<62), time.Duration(1<<62)
			b.SetBytes(int64(size))
			b.ResetTimer()
			run := func(f func()) time.Duration {
				t0 := time.Now()
				for range block {
					f()
				}
				return time.Since(t0)
			}
			for i := 0; i < b.N; i += block {
				// Alternate which side goes first, so that neither
				// always runs in the wake of the other's garbage.
				var db, dc time.Duration
				if i/block%2 == 0 {
					db = run(bare)
					dc = run(custody)
				} else {
					dc = run(custody)
					db = run(bare)
				}
				sumBare, sumCustody = sumBare+db, sumCustody+dc
				bestBare, bestCustody = min(bestBare, db), min(bestCustody, dc)
			}
			b.ReportMetric(float64(sumBare)/float64(sumCustody), "ratio-sum")
			b.ReportMetric(float64(bestBare)/float64(bestCustody), "ratio-best")
		})
	}
}
