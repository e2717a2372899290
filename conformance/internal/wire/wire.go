// Package wire is the binary codec of a conformance record, the payload of
// a signed receipt. It knows bytes and field ranges, nothing about keys or
// grades.
//
// Layout (version 1), every integer big-endian:
//
//	u8        version, always 1
//	u8 len    provider, 1..255 bytes of UTF-8 without control characters
//	u8 len    revision, same rules
//	u8        fact bits; bits 0-4 defined, bits 5-7 must be zero
//	u8        label: 0 mock, 1 isolated, 2 production
//	[32]byte  attester key id
//	u64       issued_at, Unix seconds, 1..MaxIssuedAt
//	u16 len   evidence: 1..MaxEvidence SHA-256 digests of 32 bytes each,
//	          pairwise distinct
//
// Nothing follows the last field. [Parse] refuses anything else and then
// re-encodes what it parsed and compares bytes, so an accepted payload is
// the one canonical encoding of its record.
package wire

import (
	"bytes"
	"errors"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/cryptobyte"

	"github.com/checkfu/checkfu"
)

// Version is the only record version this codec reads and writes.
const Version = 1

// Field limits.
const (
	// KnownFacts is the mask of the five defined fact bits.
	KnownFacts = 0x1f
	// MaxLabel is the largest label value (production).
	MaxLabel = 2
	// MaxIssuedAt is 9999-12-31T23:59:59Z, the last second RFC 3339 can
	// spell.
	MaxIssuedAt = 253402300799
	// MaxString is the longest provider or revision in bytes.
	MaxString = 255
	// DigestSize is the size of one evidence digest (SHA-256).
	DigestSize = 32
	// MaxEvidence is the most evidence digests a record holds.
	MaxEvidence = 65535 / DigestSize
)

// Refusal codes of this codec, re-exported by package conformance.
const (
	// CodePayloadNoncanonical: the bytes are not the one canonical
	// encoding of a valid version 1 record.
	CodePayloadNoncanonical checkfu.Code = "payload_noncanonical"
	// CodeRecordInvalid: a record's fields are out of range, so it has no
	// encoding at all.
	CodeRecordInvalid checkfu.Code = "record_invalid"
)

// A Record is the decoded form of a payload, in wire units.
type Record struct {
	Provider string
	Revision string
	Facts    uint8
	Label    uint8
	KeyID    [32]byte
	IssuedAt uint64
	Evidence [][DigestSize]byte
}

// Check reports the first field of r that is out of range, as a refusal
// with code [CodeRecordInvalid]; it returns nil for an encodable record.
func (r *Record) Check() error {
	if err := checkString("provider", r.Provider); err != nil {
		return err
	}
	if err := checkString("revision", r.Revision); err != nil {
		return err
	}
	if r.Facts&^KnownFacts != 0 {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: unknown fact bits %#02x", r.Facts&^KnownFacts)
	}
	if r.Label > MaxLabel {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: unknown label %d", r.Label)
	}
	if r.IssuedAt == 0 || r.IssuedAt > MaxIssuedAt {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: issued_at %d is outside 1..%d", r.IssuedAt, uint64(MaxIssuedAt))
	}
	if len(r.Evidence) == 0 || len(r.Evidence) > MaxEvidence {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: %d evidence digests, want 1..%d", len(r.Evidence), MaxEvidence)
	}
	seen := make(map[[DigestSize]byte]struct{}, len(r.Evidence))
	for i, d := range r.Evidence {
		if _, dup := seen[d]; dup {
			return checkfu.Refuse(CodeRecordInvalid, "conformance: evidence digest %d repeats an earlier one", i)
		}
		seen[d] = struct{}{}
	}
	return nil
}

// checkString refuses an empty or oversized string, invalid UTF-8 and any
// control character (C0, DEL, C1).
func checkString(field, s string) error {
	if len(s) == 0 || len(s) > MaxString {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: %s %s is %d bytes, want 1..%d", field, checkfu.Quote(s), len(s), MaxString)
	}
	if !utf8.ValidString(s) {
		return checkfu.Refuse(CodeRecordInvalid, "conformance: %s %s is not valid UTF-8", field, checkfu.Quote(s))
	}
	for i, c := range s {
		if unicode.IsControl(c) {
			return checkfu.Refuse(CodeRecordInvalid, "conformance: %s %s holds control character %U at byte %d", field, checkfu.Quote(s), c, i)
		}
	}
	return nil
}

// Encode returns the canonical encoding of r, or the refusal of
// [Record.Check].
func Encode(r *Record) ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	var b cryptobyte.Builder
	b.AddUint8(Version)
	b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(r.Provider)) })
	b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(r.Revision)) })
	b.AddUint8(r.Facts)
	b.AddUint8(r.Label)
	b.AddBytes(r.KeyID[:])
	b.AddUint64(r.IssuedAt)
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
		for _, d := range r.Evidence {
			b.AddBytes(d[:])
		}
	})
	return b.Bytes()
}

// Parse decodes a payload strictly: truncated fields, trailing bytes, an
// unknown version, unknown fact bits or labels, empty, oversized,
// non-UTF-8 or control-bearing strings, out-of-range times and malformed
// or repeated digests are all refused with [CodePayloadNoncanonical]. It
// then re-encodes the record and refuses it unless the bytes are equal.
func Parse(payload []byte) (Record, error) {
	return parseCanonical(payload, parseFields)
}

// parseCanonical runs parse and then demands that re-encoding the result
// gives back exactly payload. With a correct parseFields the comparison
// never fails; it is the check that makes canonicality a property of the
// verifier rather than a belief about the parser.
func parseCanonical(payload []byte, parse func([]byte) (Record, error)) (Record, error) {
	r, err := parse(payload)
	if err != nil {
		return Record{}, err
	}
	again, err := Encode(&r)
	if err != nil {
		return Record{}, noncanonical("%s", message(err))
	}
	if !bytes.Equal(again, payload) {
		return Record{}, noncanonical("conformance: payload does not re-encode to the same bytes")
	}
	return r, nil
}

// message returns the human part of a refusal from Check.
func message(err error) string {
	var r *checkfu.Refusal
	if errors.As(err, &r) {
		return r.Message
	}
	return err.Error()
}

func noncanonical(format string, args ...any) error {
	return checkfu.Refuse(CodePayloadNoncanonical, format, args...)
}

func parseFields(payload []byte) (Record, error) {
	s := cryptobyte.String(payload)
	var r Record
	var version uint8
	if !s.ReadUint8(&version) {
		return Record{}, noncanonical("conformance: payload is empty")
	}
	if version != Version {
		return Record{}, noncanonical("conformance: unknown record version %d (this verifier reads version %d)", version, Version)
	}
	var provider, revision, evidence cryptobyte.String
	var keyID []byte
	if !s.ReadUint8LengthPrefixed(&provider) ||
		!s.ReadUint8LengthPrefixed(&revision) ||
		!s.ReadUint8(&r.Facts) ||
		!s.ReadUint8(&r.Label) ||
		!s.ReadBytes(&keyID, 32) ||
		!s.ReadUint64(&r.IssuedAt) ||
		!s.ReadUint16LengthPrefixed(&evidence) {
		return Record{}, noncanonical("conformance: payload is truncated")
	}
	if !s.Empty() {
		return Record{}, noncanonical("conformance: payload has %d trailing bytes", len(s))
	}
	r.Provider, r.Revision = string(provider), string(revision)
	copy(r.KeyID[:], keyID)
	if len(evidence)%DigestSize != 0 {
		return Record{}, noncanonical("conformance: evidence is not a whole number of 32-byte digests")
	}
	for !evidence.Empty() {
		var d [DigestSize]byte
		evidence.CopyBytes(d[:])
		r.Evidence = append(r.Evidence, d)
	}
	if err := r.Check(); err != nil {
		return Record{}, noncanonical("%s", message(err))
	}
	return r, nil
}
