package signing

import (
	"bytes"
	"crypto/ed25519"

	"filippo.io/edwards25519"

	"github.com/checkfu/checkfu"
)

// A PublicKey is an Ed25519 public key admitted strictly, once, by
// [ParsePublicKey]: its encoding is canonical, it is not of small order,
// and it lies in the prime-order subgroup. Verifying with it costs one
// table scan more than crypto/ed25519.Verify. The zero PublicKey, and a
// nil one, verify nothing.
//
// Strict verification, as this package defines it, refuses everything
// crypto/ed25519.Verify refuses (S >= L, non-canonical R, a wrong
// equation) and also:
//   - a public key A whose encoding is not canonical, or that is of small
//     order (checked once, by newStrictKey);
//   - a signature whose R is of small order (checked per signature, by
//     [PublicKey.Verify]).
//
// Admission (admitKey, behind [ParsePublicKey]) adds one more rule on A:
// it must lie in the prime-order subgroup.
type PublicKey struct {
	pub ed25519.PublicKey
}

// ParsePublicKey admits a raw 32-byte Ed25519 public key strictly. It
// refuses a key that is not 32 bytes or not the canonical encoding of a
// point ([CodeKeyInvalid]), a point of small order ([CodeKeySmallOrder]),
// and a point outside the prime-order subgroup ([CodeKeyMixedOrder]).
// Every key of an [AttesterSet], every key [KeyIDOf] accepts, and every
// checkpoint verifier key of the event log passes through it.
func ParsePublicKey(raw []byte) (*PublicKey, error) { return admitKey(raw) }

// Bytes returns a copy of the raw 32-byte key.
func (k *PublicKey) Bytes() []byte { return bytes.Clone(k.pub) }

// newStrictKey decodes a raw 32-byte public key and applies the per-key
// strict rules.
func newStrictKey(a []byte) (*PublicKey, error) {
	if len(a) != ed25519.PublicKeySize {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: public key is %d bytes, want %d", len(a), ed25519.PublicKeySize)
	}
	p, err := new(edwards25519.Point).SetBytes(a)
	if err != nil {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: public key is not a point on edwards25519")
	}
	if !bytes.Equal(p.Bytes(), a) {
		return nil, checkfu.Refuse(CodeKeyInvalid, "signing: public key is a non-canonical encoding of its point")
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, checkfu.Refuse(CodeKeySmallOrder, "signing: public key is a point of small order, for which forged signatures verify")
	}
	return &PublicKey{pub: bytes.Clone(a)}, nil
}

// Verify reports whether sig is a strictly valid signature of msg by k.
func (k *PublicKey) Verify(msg, sig []byte) bool {
	if k == nil || len(k.pub) != ed25519.PublicKeySize {
		return false
	}
	if len(sig) != ed25519.SignatureSize || smallOrderR(sig[:32]) {
		return false
	}
	return ed25519.Verify(k.pub, msg, sig)
}

// smallOrderEncodings lists every 32-byte string that edwards25519
// decodes to one of the eight points of small order: their canonical
// encodings and the non-canonical ones (which crypto/ed25519 already
// refuses as R, listed anyway). TestSmallOrderEncodings derives the list
// independently.
var smallOrderEncodings = [...][32]byte{
	hex32("0100000000000000000000000000000000000000000000000000000000000000"), // identity
	hex32("0100000000000000000000000000000000000000000000000000000000000080"),
	hex32("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
	hex32("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
	hex32("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), // order 2
	hex32("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
	hex32("0000000000000000000000000000000000000000000000000000000000000000"), // order 4
	hex32("0000000000000000000000000000000000000000000000000000000000000080"),
	hex32("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
	hex32("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
	hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"), // order 8
	hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
	hex32("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
	hex32("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
}

// smallOrderR reports whether r encodes a point of small order.
func smallOrderR(r []byte) bool {
	for i := range smallOrderEncodings {
		if bytes.Equal(r, smallOrderEncodings[i][:]) {
			return true
		}
	}
	return false
}

// admitKey applies newStrictKey and then refuses a key outside the
// prime-order subgroup: [L]A must be the identity. It computes
// [L-1]A + A, since L itself is not a canonical scalar.
func admitKey(a []byte) (*PublicKey, error) {
	k, err := newStrictKey(a)
	if err != nil {
		return nil, err
	}
	p, _ := new(edwards25519.Point).SetBytes(a) // decoded in newStrictKey
	la := new(edwards25519.Point).ScalarMult(lMinusOne, p)
	if la.Add(la, p).Equal(edwards25519.NewIdentityPoint()) != 1 {
		return nil, checkfu.Refuse(CodeKeyMixedOrder, "signing: public key lies outside the prime-order subgroup (it has a torsion component)")
	}
	return k, nil
}

// lMinusOne is L-1, L = 2^252 + 27742317777372353535851937790883648493
// the order of the prime-order subgroup, little-endian.
var lMinusOne = func() *edwards25519.Scalar {
	b := hex32("ecd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
	s, err := edwards25519.NewScalar().SetCanonicalBytes(b[:])
	if err != nil {
		panic("signing: L-1 is not canonical: " + err.Error())
	}
	return s
}()

func hex32(s string) [32]byte {
	var out [32]byte
	if err := parseHex32(s, out[:]); err != nil {
		panic("signing: bad hex32 literal " + s)
	}
	return out
}
