package custody

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/checkfu/checkfu"
	"golang.org/x/crypto/chacha20poly1305"
)

// CodeAddressMismatch is the code of the Refusal returned when a sealed
// record does not open at the binding it is read from: it was sealed for
// another namespace, integration or handle (it was moved), or it was
// altered. The two cannot be told apart, by design.
const CodeAddressMismatch checkfu.Code = "custody_address_mismatch"

// CodeUnknownKeyVersion is the code of the Refusal returned when a sealed
// record names a key version its keyset does not list.
const CodeUnknownKeyVersion checkfu.Code = "custody_unknown_key_version"

// CodeMalformedRecord is the code of the Refusal returned when sealed bytes
// are not a sealed record of a known format.
const CodeMalformedRecord checkfu.Code = "custody_malformed_record"

// sealDomain is the first component of every record's associated data. It
// separates custody records from any other use of the same keys.
const sealDomain = "checkfu.custody.record.v1"

// Layout of a sealed record: format byte, key version (uint32, big
// endian), 24-byte nonce, ciphertext with its 16-byte tag. The address is
// deliberately not stored: it is recomputed from the store's key columns.
const (
	sealFormat    byte = 1
	sealHeaderLen      = 1 + 4 + chacha20poly1305.NonceSizeX
	// SealOverhead is how many bytes a sealed record adds to its secret.
	SealOverhead = sealHeaderLen + chacha20poly1305.Overhead
)

// appendLP appends a 4-byte big-endian length and then p.
func appendLP(dst, p []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
	return append(dst, p...)
}

// appendLPString is appendLP for a string, without converting it.
func appendLPString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// appendAD appends the associated data of a record at binding b sealed
// under key version v: domain, namespace, integration, handle and key
// version, each with a 4-byte length prefix, in that order. Without the
// prefixes ("github", "deploy-token") and ("githubdeploy-", "token") would
// give the same bytes.
func appendAD(dst []byte, b Binding, v uint32) []byte {
	dst = appendLPString(dst, sealDomain)
	dst = appendLPString(dst, b.Namespace)
	dst = appendLPString(dst, b.Integration)
	dst = appendLPString(dst, b.Handle.s)
	var ver [4]byte
	binary.BigEndian.PutUint32(ver[:], v)
	return appendLP(dst, ver[:])
}

// adLen returns the length of the associated data of a record at b.
func adLen(b Binding) int {
	return 5*4 + len(sealDomain) + len(b.Namespace) + len(b.Integration) + len(b.Handle.s) + 4
}

// Seal encrypts s for binding b under the keyset's primary version and
// returns the sealed record. The record opens only with [Keyset.Open] at
// exactly b.
func (ks *Keyset) Seal(b Binding, s *Secret) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	box, err := s.rlock()
	if err != nil {
		return nil, err
	}
	defer box.mu.RUnlock()
	return st.seal(b, st.primary, box.b) // the AEAD reads box.b and keeps nothing
}

// seal returns the record sealing plain for b under version v. The
// associated data is built in the tail of the record's own allocation,
// beyond the capacity of the slice returned, so sealing costs one
// allocation like the bare AEAD (an AD passed to the cipher.AEAD interface
// escapes to the heap wherever it is built).
func (st *keysetState) seal(b Binding, v uint32, plain []byte) ([]byte, error) {
	a, err := st.aead(v, b.Namespace)
	if err != nil {
		return nil, err
	}
	n := sealHeaderLen + len(plain) + a.Overhead()
	buf := make([]byte, n, n+adLen(b))
	ad := appendAD(buf[n:n], b, v)
	buf[0] = sealFormat
	binary.BigEndian.PutUint32(buf[1:5], v)
	nonce := buf[5:sealHeaderLen]
	_, _ = rand.Read(nonce)
	return a.Seal(buf[:sealHeaderLen:n], nonce, plain, ad), nil
}

// SealedKeyVersion returns the key version a sealed record was sealed
// under, without opening it.
func SealedKeyVersion(sealed []byte) (uint32, error) {
	if len(sealed) < SealOverhead {
		return 0, checkfu.Refuse(CodeMalformedRecord, "custody: sealed record has %d bytes, fewer than the %d of an empty one", len(sealed), SealOverhead)
	}
	if sealed[0] != sealFormat {
		return 0, checkfu.Refuse(CodeMalformedRecord, "custody: sealed record has format %d, want %d", sealed[0], sealFormat)
	}
	return binary.BigEndian.Uint32(sealed[1:5]), nil
}

// Open decrypts a record read at binding b, which must be the address the
// caller computed from the store's key columns, never one stored beside
// the ciphertext. A record sealed for any other binding, or altered, is
// refused with [CodeAddressMismatch]; one under a version the keyset does
// not list with [CodeUnknownKeyVersion].
func (ks *Keyset) Open(b Binding, sealed []byte) (*Secret, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	plain, err := st.open(b, sealed)
	if err != nil {
		return nil, err
	}
	return adoptSecret(plain), nil
}

// open returns the plaintext of sealed, read at b, in a fresh buffer (with
// the associated data in its tail, beyond the slice's capacity).
func (st *keysetState) open(b Binding, sealed []byte) ([]byte, error) {
	v, err := SealedKeyVersion(sealed)
	if err != nil {
		return nil, err
	}
	a, err := st.aead(v, b.Namespace)
	if err != nil {
		return nil, err
	}
	n := len(sealed) - sealHeaderLen - a.Overhead()
	buf := make([]byte, n, n+adLen(b))
	ad := appendAD(buf[n:n], b, v)
	plain, err := a.Open(buf[:0:n], sealed[5:sealHeaderLen], sealed[sealHeaderLen:], ad)
	if err != nil {
		return nil, checkfu.Refuse(CodeAddressMismatch, "custody: sealed record does not open at %s: it was sealed for another address, or altered", b)
	}
	return plain, nil
}

// Rewrap re-seals a record read at binding b under the keyset's primary
// version. The plaintext never leaves this function and is zeroed before
// it returns. A record already under the primary is re-sealed too (with a
// fresh nonce). Rewrap refuses what [Keyset.Open] refuses.
func (ks *Keyset) Rewrap(b Binding, sealed []byte) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	plain, err := st.open(b, sealed)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return st.seal(b, st.primary, plain)
}
