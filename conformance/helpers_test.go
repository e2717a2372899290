package conformance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"filippo.io/edwards25519"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// testSigner returns a deterministic signer for seed byte n.
func testSigner(n byte) *signing.Signer {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = n
	s, _, err := signing.GenerateSigner(bytes.NewReader(seed))
	if err != nil {
		panic(err)
	}
	return s
}

// testPriv returns the private key behind testSigner(n).
func testPriv(n byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = n
	return ed25519.NewKeyFromSeed(seed)
}

type entry struct {
	Name         string `json:"name"`
	PublicKeyPEM string `json:"public_key_pem"`
}

func setJSON(t testing.TB, entries ...entry) []byte {
	t.Helper()
	b, err := json.Marshal(map[string][]entry{"attesters": entries})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testSet returns an admitted set of the given signers, named a0, a1, ...
func testSet(t testing.TB, signers ...*signing.Signer) *signing.AttesterSet {
	t.Helper()
	var es []entry
	for i, s := range signers {
		es = append(es, entry{Name: "a" + string(rune('0'+i)), PublicKeyPEM: string(s.PublicKeyPEM())})
	}
	set, err := signing.ParseAttesterSet(setJSON(t, es...))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

var daytona2 = checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: "2"}

// goodRecord is a record that certifies daytona2.
func goodRecord() Record {
	return Record{
		Target:   daytona2,
		Facts:    AllFacts(),
		Label:    checkfu.LabelProduction,
		IssuedAt: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC),
		Evidence: []Digest{DigestOf([]byte("matrix run 1")), DigestOf([]byte("matrix run 2"))},
	}
}

func mustSign(t testing.TB, s *signing.Signer, r Record) []byte {
	t.Helper()
	env, err := Sign(s, r)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func mustPayload(t testing.TB, r Record) []byte {
	t.Helper()
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signPayload signs payload under typ with no record check, to make
// validly signed envelopes around malformed records.
func signPayload(s *signing.Signer, typ string, payload []byte) []byte {
	env, err := s.SignPayload(typ, payload)
	if err != nil {
		panic(err)
	}
	return env
}

// pae is DSSE's pre-authentication encoding, as docs/receipts.md spells
// it, written out again so that the tests check package signing's.
func pae(typ string, payload []byte) []byte {
	return fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(typ), typ, len(payload), payload)
}

// signWithIdentityR returns the signature (R = identity, S = H(R||A||M)*a)
// that the holder of priv can make and crypto/ed25519 accepts.
func signWithIdentityR(t testing.TB, priv ed25519.PrivateKey, msg []byte) []byte {
	t.Helper()
	h := sha512.Sum512(priv.Seed())
	a, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		t.Fatal(err)
	}
	r := edwards25519.NewIdentityPoint().Bytes()
	kh := sha512.New()
	kh.Write(r)
	kh.Write(priv.Public().(ed25519.PublicKey))
	kh.Write(msg)
	k, err := edwards25519.NewScalar().SetUniformBytes(kh.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := edwards25519.NewScalar().Multiply(k, a)
	return append(r, s.Bytes()...)
}
