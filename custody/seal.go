package custody

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"golang.org/x/crypto/chacha20poly1305"
)

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

// MaxSecretBytes is the longest Secret [Keyset.Seal] seals: 64 KiB, far
// above any credential that travels in a request header (an API token, an
// OAuth access token, a JWT, a root key). Longer ones are refused with
// [CodeSecretTooLarge].
const MaxSecretBytes = 64 << 10

// MaxSealedBytes is the longest sealed record: a sealed Secret of
// [MaxSecretBytes]. [Keyset.Open] and [Keyset.Rewrap] refuse longer ones
// with [CodeRecordMalformed] before allocating anything for them, and the
// SQL stores read at most one byte more of a row (a database writer's
// oversized row is a corrupt row, not an allocation of its size on every
// Open).
const MaxSealedBytes = MaxSecretBytes + SealOverhead

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
	dst = append(dst, lpSealDomain...)
	dst = appendLPString(dst, b.Namespace)
	dst = appendLPString(dst, b.Integration)
	dst = appendLPString(dst, b.Handle.String())
	return append(dst, 0, 0, 0, 4, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// lpSealDomain is LP(sealDomain), the constant first component of the
// associated data.
var lpSealDomain = appendLPString(nil, sealDomain)

// maxADLen is the longest associated data of a valid binding: five length
// prefixes, the domain, two names of maxNameLen, a handle and the version.
const maxADLen = 5*4 + len(sealDomain) + 2*address.MaxNameLen + address.HandleLen + 4

// An adScratch is a buffer to build one record's associated data in. The
// associated data escapes to the heap wherever it is built (it is passed
// to the cipher.AEAD interface), so seal and open take a scratch buffer
// from adScratchPool instead of allocating: a heap allocation costs about
// twice as much as a pool round trip, and the bytes it adds to every
// record and Secret cost the garbage collector on every call
// (docs/benchmarks/custody.md). The associated data holds no secret (the
// binding and key version are public), so a reused buffer leaks nothing.
type adScratch [maxADLen]byte

var adScratchPool = sync.Pool{New: func() any { return new(adScratch) }}

// getAD returns the associated data of a record at b under version v,
// built in a pooled scratch buffer that the caller must give back with
// adScratchPool.Put(scratch) once the AEAD has returned. b must be valid.
func getAD(b Binding, v uint32) (ad []byte, scratch *adScratch) {
	scratch = adScratchPool.Get().(*adScratch)
	return appendAD(scratch[:0], b, v), scratch
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
	defer box.mu.Unlock()
	if len(box.b) > MaxSecretBytes {
		return nil, checkfu.Refuse(CodeSecretTooLarge, "custody: a Secret of %d bytes is longer than the %d custody seals", len(box.b), MaxSecretBytes)
	}
	return st.seal(b, st.primary, box.b) // the AEAD reads box.b and keeps nothing
}

// seal returns the record sealing plain for b under version v, in one
// allocation of exactly its size, like the bare AEAD.
func (st *keysetState) seal(b Binding, v uint32, plain []byte) ([]byte, error) {
	a, err := st.aead(v, b.Namespace)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, sealHeaderLen, sealHeaderLen+len(plain)+a.Overhead())
	buf[0] = sealFormat
	binary.BigEndian.PutUint32(buf[1:5], v)
	nonce := buf[5:sealHeaderLen]
	_, _ = rand.Read(nonce)
	ad, scratch := getAD(b, v)
	sealed := a.Seal(buf, nonce, plain, ad)
	adScratchPool.Put(scratch)
	return sealed, nil
}

// SealedKeyVersion returns the key version a sealed record was sealed
// under, without opening it. A record shorter than an empty one, longer
// than [MaxSealedBytes] or of an unknown format is refused with
// [CodeRecordMalformed].
func SealedKeyVersion(sealed []byte) (uint32, error) {
	if len(sealed) < SealOverhead || len(sealed) > MaxSealedBytes || sealed[0] != sealFormat {
		return 0, malformed(sealed)
	}
	return binary.BigEndian.Uint32(sealed[1:5]), nil
}

// malformed returns SealedKeyVersion's refusal, out of line so that
// SealedKeyVersion inlines.
func malformed(sealed []byte) error {
	if len(sealed) < SealOverhead {
		return checkfu.Refuse(CodeRecordMalformed, "custody: sealed record has %d bytes, fewer than the %d of an empty one", len(sealed), SealOverhead)
	}
	if len(sealed) > MaxSealedBytes {
		return checkfu.Refuse(CodeRecordMalformed, "custody: sealed record has %d bytes, more than MaxSealedBytes (%d)", len(sealed), MaxSealedBytes)
	}
	return checkfu.Refuse(CodeRecordMalformed, "custody: sealed record has format %d, want %d", sealed[0], sealFormat)
}

// Open decrypts a record read at binding b, which must be the address the
// caller computed from the store's key columns, never one stored beside
// the ciphertext. A record sealed for any other binding, or altered, is
// refused with [CodeAddressMismatch]; one under a version the keyset does
// not list with [CodeKeyVersionUnknown].
func (ks *Keyset) Open(b Binding, sealed []byte) (*Secret, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st, err := ks.load()
	if err != nil {
		return nil, err
	}
	v, a, err := st.opener(b, sealed)
	if err != nil {
		return nil, err
	}
	// The plaintext is decrypted straight into the Secret's own buffer.
	s, buf := newSecretBuffer(len(sealed) - SealOverhead)
	if err := openInto(a, b, v, sealed, buf); err != nil {
		return nil, err
	}
	return s, nil
}

// opener checks the header of sealed and returns its key version and the
// AEAD that opens it at b.
func (st *keysetState) opener(b Binding, sealed []byte) (uint32, cipher.AEAD, error) {
	v, err := SealedKeyVersion(sealed)
	if err != nil {
		return 0, nil, err
	}
	a, err := st.aead(v, b.Namespace)
	if err != nil {
		return 0, nil, err
	}
	return v, a, nil
}

// openInto decrypts sealed, read at b and sealed under version v, into
// buf, whose length must be the plaintext length (len(sealed) -
// SealOverhead). On failure buf is left zero.
func openInto(a cipher.AEAD, b Binding, v uint32, sealed, buf []byte) error {
	ad, scratch := getAD(b, v)
	_, err := a.Open(buf[:0], sealed[5:sealHeaderLen], sealed[sealHeaderLen:], ad)
	adScratchPool.Put(scratch)
	if err != nil {
		clear(buf)
		return checkfu.Refuse(CodeAddressMismatch, "custody: sealed record does not open at %s: it was sealed for another address, or altered", b)
	}
	return nil
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
	v, a, err := st.opener(b, sealed)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, len(sealed)-SealOverhead)
	defer clear(plain)
	if err := openInto(a, b, v, sealed, plain); err != nil {
		return nil, err
	}
	return st.seal(b, st.primary, plain)
}
