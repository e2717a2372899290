package conformance

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/sigtest"
	"github.com/checkfu/checkfu/signing"
)

// testSigner returns a deterministic signer for seed byte n.
func testSigner(n byte) *signing.Signer {
	s, _, err := signing.GenerateSigner(bytes.NewReader(testPriv(n).Seed()))
	if err != nil {
		panic(err)
	}
	return s
}

// testPriv returns the private key behind testSigner(n).
func testPriv(n byte) ed25519.PrivateKey { return sigtest.Priv(n) }

type entry = sigtest.Entry

func setJSON(entries ...entry) []byte { return sigtest.AttesterSetJSON(entries...) }

// testSet returns an admitted set of the given signers, named a0, a1, ...
func testSet(t testing.TB, signers ...*signing.Signer) *signing.AttesterSet {
	t.Helper()
	var es []entry
	for i, s := range signers {
		es = append(es, entry{Name: "a" + string(rune('0'+i)), PublicKeyPEM: string(s.PublicKeyPEM())})
	}
	set, err := signing.ParseAttesterSet(setJSON(es...))
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
