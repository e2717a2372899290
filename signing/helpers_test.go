package signing

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/checkfu/checkfu/internal/sigtest"
)

// testType is the payloadType of the statements these tests sign.
const testType = "checkfu.signing-test.v1"

// testSigner returns a deterministic signer for seed byte n.
func testSigner(n byte) *Signer { return newSigner(testPriv(n)) }

// testPriv returns the private key behind testSigner(n).
func testPriv(n byte) ed25519.PrivateKey { return sigtest.Priv(n) }

type entry = sigtest.Entry

func setJSON(entries ...entry) []byte { return sigtest.AttesterSetJSON(entries...) }

// testSet returns an admitted set of the given signers, named a0, a1, ...
func testSet(t testing.TB, signers ...*Signer) *AttesterSet {
	t.Helper()
	var es []entry
	for i, s := range signers {
		es = append(es, entry{Name: "a" + string(rune('0'+i)), PublicKeyPEM: string(s.PublicKeyPEM())})
	}
	set, err := ParseAttesterSet(setJSON(es...))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// rawKeyPEM wraps a raw 32-byte key, valid or not, in PKIX PEM.
func rawKeyPEM(t testing.TB, raw []byte) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(raw))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func mustSign(t testing.TB, s *Signer, payload []byte) []byte {
	t.Helper()
	env, err := s.SignPayload(testType, payload)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
