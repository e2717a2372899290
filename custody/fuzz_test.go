package custody

import (
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
)

// FuzzOpen: opening arbitrary bytes at a fixed binding never panics and
// fails only with a typed refusal, never with plaintext; a record sealed
// there still opens after the fuzzer's bytes are ignored.
func FuzzOpen(f *testing.F) {
	ks := GenerateKeyset()
	b := Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	sealed, err := ks.Seal(b, NewSecret([]byte("fuzz-secret")))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Add(append([]byte{1, 0, 0, 0, 2}, make([]byte, 40)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ks.Open(b, data)
		if err == nil {
			// Only the genuine record (or a forgery, which would be a
			// break of the AEAD) opens.
			if string(revealed(t, s)) != "fuzz-secret" {
				t.Fatalf("arbitrary bytes opened")
			}
			return
		}
		if _, ok := checkfu.CodeOf(err); !ok {
			t.Fatalf("Open error %v is not a refusal", err)
		}
	})
}
