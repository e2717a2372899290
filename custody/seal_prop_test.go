package custody

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/checkfu/checkfu/custody/address"
	"pgregory.net/rapid"
)

var (
	genName   = rapid.StringMatching(`[A-Za-z0-9][A-Za-z0-9._-]{0,24}`)
	genHandle = rapid.Custom(func(t *rapid.T) Handle {
		return address.MustParseHandle(rapid.StringMatching(`ch_[a-z2-7]{25}[aeimquy4]`).Draw(t, "handle"))
	})
	genBinding = rapid.Custom(func(t *rapid.T) Binding {
		return Binding{Namespace: genName.Draw(t, "namespace"), Integration: genName.Draw(t, "integration"), Handle: genHandle.Draw(t, "handle")}
	})
)

// revealed returns a copy of s's bytes, for tests.
func revealed(t interface{ Fatalf(string, ...any) }, s *Secret) []byte {
	var out []byte
	if err := s.reveal(func(b []byte) error { out = bytes.Clone(b); return nil }); err != nil {
		t.Fatalf("reveal: %v", err)
	}
	return out
}

func TestPropSealOpenRoundTrip(t *testing.T) {
	ks := GenerateKeyset()
	rapid.Check(t, func(t *rapid.T) {
		b := genBinding.Draw(t, "binding")
		plain := rapid.SliceOfN(rapid.Byte(), 0, 512).Draw(t, "plain")
		sealed, err := ks.Seal(b, NewSecret(bytes.Clone(plain)))
		if err != nil {
			t.Fatalf("Seal: %v", err)
		}
		if len(sealed) != len(plain)+SealOverhead {
			t.Fatalf("len(sealed) = %d, want %d", len(sealed), len(plain)+SealOverhead)
		}
		s, err := ks.Open(b, sealed)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if got := revealed(t, s); !bytes.Equal(got, plain) {
			t.Fatalf("round trip = %x, want %x", got, plain)
		}
	})
}

// TestPropAnyAddressChangeFails changes one component of the address (or
// the key version, under a keyset whose versions share one root key, so
// that only the associated data separates them) and requires the open to
// fail with CodeAddressMismatch.
func TestPropAnyAddressChangeFails(t *testing.T) {
	ks := fixedKeyset(t, 1, 1, 2)
	rapid.Check(t, func(t *rapid.T) {
		b := genBinding.Draw(t, "binding")
		sealed, err := ks.Seal(b, NewSecret([]byte("prop-secret")))
		if err != nil {
			t.Fatalf("Seal: %v", err)
		}
		moved, to := b, sealed
		switch c := rapid.IntRange(0, 4).Draw(t, "component"); c {
		case 0:
			moved.Namespace = genName.Filter(func(s string) bool { return s != b.Namespace }).Draw(t, "namespace2")
		case 1:
			moved.Integration = genName.Filter(func(s string) bool { return s != b.Integration }).Draw(t, "integration2")
		case 2:
			moved.Handle = genHandle.Filter(func(h Handle) bool { return h != b.Handle }).Draw(t, "handle2")
		case 3: // shift the boundary between namespace and integration
			joined := b.Namespace + b.Integration
			cut := rapid.IntRange(1, len(joined)-1).Filter(func(i int) bool { return i != len(b.Namespace) }).Draw(t, "cut")
			moved.Namespace, moved.Integration = joined[:cut], joined[cut:]
			if moved.Validate() != nil {
				t.Skip("shifted names are not valid names")
			}
		case 4:
			to = bytes.Clone(sealed)
			binary.BigEndian.PutUint32(to[1:5], 2)
		}
		if _, err := ks.Open(moved, to); !errors.Is(err, CodeAddressMismatch) {
			t.Fatalf("Open at %s after the change: %v, want %s", moved, err, CodeAddressMismatch)
		}
	})
}

func TestPropRewrapPreservesPlaintext(t *testing.T) {
	old := GenerateKeyset()
	rotated, err := old.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		b := genBinding.Draw(t, "binding")
		plain := rapid.SliceOfN(rapid.Byte(), 0, 256).Draw(t, "plain")
		sealed, err := old.Seal(b, NewSecret(bytes.Clone(plain)))
		if err != nil {
			t.Fatalf("Seal: %v", err)
		}
		re, err := rotated.Rewrap(b, sealed)
		if err != nil {
			t.Fatalf("Rewrap: %v", err)
		}
		if v, _ := SealedKeyVersion(re); v != rotated.Primary() {
			t.Fatalf("rewrapped version = %d, want %d", v, rotated.Primary())
		}
		if bytes.Equal(re, sealed) {
			t.Fatal("Rewrap returned the input")
		}
		s, err := rotated.Open(b, re)
		if err != nil {
			t.Fatalf("Open after Rewrap: %v", err)
		}
		if got := revealed(t, s); !bytes.Equal(got, plain) {
			t.Fatalf("after Rewrap = %x, want %x", got, plain)
		}
		if _, err := old.Open(b, re); !errors.Is(err, CodeKeyVersionUnknown) {
			t.Fatalf("old keyset opened a record under the new primary: %v", err)
		}
	})
}
