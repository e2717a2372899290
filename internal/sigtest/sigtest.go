package sigtest

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/json"

	"filippo.io/edwards25519"
)

// Priv returns the deterministic private key whose seed is n followed by
// zero bytes.
func Priv(n byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = n
	return ed25519.NewKeyFromSeed(seed)
}

// An Entry is one attester of an attester set's JSON form.
type Entry struct {
	Name         string `json:"name"`
	PublicKeyPEM string `json:"public_key_pem"`
}

// AttesterSetJSON returns the JSON form of an attester set holding entries,
// in order, admitted or not: the set's parser decides.
func AttesterSetJSON(entries ...Entry) []byte {
	b, err := json.Marshal(map[string][]Entry{"attesters": entries})
	if err != nil {
		panic(err) // strings always marshal
	}
	return b
}

// SignWithIdentityR returns the signature of msg under priv whose R is the
// identity point (S = H(R||A||M)*a): a signature the holder of priv can
// make and crypto/ed25519 accepts, which a strict verifier must refuse.
func SignWithIdentityR(priv ed25519.PrivateKey, msg []byte) []byte {
	h := sha512.Sum512(priv.Seed())
	a, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		panic(err) // 32 bytes always clamp, 64 always reduce
	}
	r := edwards25519.NewIdentityPoint().Bytes()
	kh := sha512.New()
	kh.Write(r)
	kh.Write(priv.Public().(ed25519.PublicKey))
	kh.Write(msg)
	k, err := edwards25519.NewScalar().SetUniformBytes(kh.Sum(nil))
	if err != nil {
		panic(err) // 32 bytes always clamp, 64 always reduce
	}
	s := edwards25519.NewScalar().Multiply(k, a)
	return append(r, s.Bytes()...)
}
