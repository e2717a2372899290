package custody

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/custody/address"
)

// secretSizes crosses every boundary of newSecretBuffer's inline classes
// and the out-of-line fallback.
var secretSizes = []int{0, 1, 16, 17, 32, 33, 48, 49, 64, 65, 80, 81, 96, 97, 128, 129, 160, 161, 208, 209, 272, 273, 336, 337, 464, 465, 592, 593, 720, 721, 976, 977, 4096}

// TestSecretBufferSizes checks NewSecret and Seal/Open at every size
// class: the bytes round-trip, the Secret's slice ends at its length (the
// rest of the inline array is unreachable through the box), and Destroy
// zeroes the bytes in place.
func TestSecretBufferSizes(t *testing.T) {
	ks := GenerateKeyset()
	b := Binding{Namespace: "acme-corp", Integration: "github", Handle: address.NewHandle()}
	for _, n := range secretSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(i*7 + 1)
			}
			src := bytes.Clone(want)
			s := NewSecret(src)
			if !bytes.Equal(src, make([]byte, n)) {
				t.Fatal("NewSecret did not zero the caller's slice")
			}
			sealed, err := ks.Seal(b, s)
			if err != nil {
				t.Fatal(err)
			}
			opened, err := ks.Open(b, sealed)
			if err != nil {
				t.Fatal(err)
			}
			for name, x := range map[string]*Secret{"new": s, "opened": opened} {
				raw := x.box().b
				if len(raw) != n || cap(raw) != n {
					t.Errorf("%s: box holds len %d cap %d, want %d and %d", name, len(raw), cap(raw), n, n)
				}
				err := x.reveal(func(got []byte) error {
					if !bytes.Equal(got, want) {
						t.Errorf("%s: reveal gave %x, want %x", name, got, want)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				x.Destroy()
				if !bytes.Equal(raw, make([]byte, n)) {
					t.Errorf("%s: Destroy left the bytes in memory", name)
				}
			}
		})
	}
}

// TestOpenFailureLeavesNoPlaintext opens a record at the wrong address
// straight into a Secret buffer: the refusal must leave the buffer zero.
// (x/crypto also zeroes its output on failure, so this pins the combined
// behaviour; openInto's own clear is a second line.)
func TestOpenFailureLeavesNoPlaintext(t *testing.T) {
	ks := GenerateKeyset()
	b := Binding{Namespace: "acme-corp", Integration: "github", Handle: address.NewHandle()}
	moved := b
	moved.Integration = "gitlab"
	sealed, err := ks.Seal(b, NewSecret([]byte(testCanary)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ks.load()
	if err != nil {
		t.Fatal(err)
	}
	v, a, err := st.opener(moved, sealed)
	if err != nil {
		t.Fatal(err)
	}
	n := len(sealed) - SealOverhead
	_, buf := newSecretBuffer(n)
	if err := openInto(a, moved, v, sealed, buf); !errors.Is(err, CodeAddressMismatch) {
		t.Fatalf("openInto at a moved address = %v, want %s", err, CodeAddressMismatch)
	}
	if !bytes.Equal(buf, make([]byte, n)) {
		t.Error("a failed open left bytes in the Secret's buffer")
	}
}

// TestSecretConcurrentUseAndDestroy seals, opens and reveals one Secret
// from several goroutines while another destroys it. Every use either
// sees the whole secret or is refused with CodeSecretDestroyed, and the
// race detector (go test -race) sees no unsynchronised access.
func TestSecretConcurrentUseAndDestroy(t *testing.T) {
	ks := GenerateKeyset()
	b := Binding{Namespace: "acme-corp", Integration: "github", Handle: address.NewHandle()}
	s := NewSecret([]byte(testCanary))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				sealed, err := ks.Seal(b, s)
				if errors.Is(err, CodeSecretDestroyed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				opened, err := ks.Open(b, sealed)
				if err != nil {
					t.Error(err)
					return
				}
				_ = opened.reveal(func(got []byte) error {
					if string(got) != testCanary {
						t.Errorf("sealed a torn secret: %q", got)
					}
					return nil
				})
				opened.Destroy()
				err = s.reveal(func(got []byte) error {
					if string(got) != testCanary {
						t.Errorf("revealed a torn secret: %q", got)
					}
					return nil
				})
				if err != nil && !errors.Is(err, CodeSecretDestroyed) {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() { s.Destroy() })
	wg.Wait()
	if !s.Destroyed() {
		t.Error("Destroyed() = false after Destroy")
	}
}
