package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"testing"

	"filippo.io/edwards25519"
)

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

func ed25519Verify(pub, msg, sig []byte) bool {
	return ed25519.Verify(ed25519.PublicKey(pub), msg, sig)
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func hexString(b []byte) string { return hex.EncodeToString(b) }
