package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance/internal/wire"
	"github.com/checkfu/checkfu/signing"
)

// A Digest is the SHA-256 digest of one piece of matrix evidence. Its text
// form is "sha256:" followed by 64 lowercase hex digits.
type Digest [32]byte

// DigestOf returns the SHA-256 digest of evidence.
func DigestOf(evidence []byte) Digest { return sha256.Sum256(evidence) }

// String returns "sha256:" and the lowercase hex form of d.
func (d Digest) String() string { return "sha256:" + hex.EncodeToString(d[:]) }

// ParseDigest parses "sha256:" followed by exactly 64 lowercase hex digits.
func ParseDigest(s string) (Digest, error) {
	const prefix = "sha256:"
	// A key id's text form is the same 64 lowercase hex digits; signing
	// parses them, once for the module.
	digits, ok := strings.CutPrefix(s, prefix)
	id, err := signing.ParseKeyID(digits)
	if !ok || err != nil {
		return Digest{}, checkfu.Refuse(CodeRecordInvalid, "conformance: evidence digest %s is not sha256: and 64 lowercase hex digits", checkfu.Quote(s))
	}
	return Digest(id), nil
}

// MarshalText implements encoding.TextMarshaler with the "sha256:" form.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParseDigest].
func (d *Digest) UnmarshalText(text []byte) error {
	v, err := ParseDigest(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// A Record is what a receipt states: this attester observed these facts
// of this exact provider revision, with evidence of this label, at this
// time. A Record proves nothing by itself; see [Verify].
//
// The zero Record is invalid (it has no provider), and an unsigned Record
// is never a certificate.
type Record struct {
	// Target is the exact provider revision the record is about.
	Target checkfu.ProviderRevision
	// Facts are the facts the matrix established.
	Facts FactSet
	// Label says how the evidence was produced; only LabelProduction
	// can certify.
	Label checkfu.Label
	// Attester is the key id of the signing attester. [Sign]
	// fills it in.
	Attester signing.KeyID
	// IssuedAt is when the attester issued the record, in whole seconds.
	IssuedAt time.Time
	// Evidence holds the digests of the matrix evidence, at least one,
	// pairwise distinct, in the attester's order.
	Evidence []Digest
}

// Check reports whether r can be encoded: provider and revision of 1 to
// 255 bytes of UTF-8 without control characters, a valid label, an issue
// time in whole seconds between 1970-01-01T00:00:01Z and
// 9999-12-31T23:59:59Z, and 1 to 2047 distinct evidence digests. It
// returns a refusal with [CodeRecordInvalid]. A record lacking facts or
// carrying mock evidence is valid; it just certifies nothing.
func (r Record) Check() error {
	_, err := r.toWire()
	return err
}

func (r Record) toWire() (*wire.Record, error) {
	if !r.Label.Valid() {
		return nil, checkfu.Refuse(CodeRecordInvalid, "conformance: %v is not an evidence label", r.Label)
	}
	if r.IssuedAt.Nanosecond() != 0 {
		return nil, checkfu.Refuse(CodeRecordInvalid, "conformance: issued_at %q has a fraction of a second; records hold whole seconds", r.IssuedAt.Format(time.RFC3339Nano))
	}
	sec := r.IssuedAt.Unix()
	if sec < 1 || sec > wire.MaxIssuedAt {
		return nil, checkfu.Refuse(CodeRecordInvalid, "conformance: issued_at %q is outside 1970-01-01T00:00:01Z..9999-12-31T23:59:59Z", r.IssuedAt.UTC().Format(time.RFC3339))
	}
	w := &wire.Record{
		Provider: r.Target.Provider,
		Revision: r.Target.Revision,
		Facts:    r.Facts.bits,
		Label:    uint8(r.Label),
		KeyID:    r.Attester,
		IssuedAt: uint64(sec),
		Evidence: make([][32]byte, len(r.Evidence)),
	}
	for i, d := range r.Evidence {
		w.Evidence[i] = d
	}
	if err := w.Check(); err != nil {
		return nil, err
	}
	return w, nil
}

func fromWire(w *wire.Record) Record {
	r := Record{
		Target:   checkfu.ProviderRevision{Provider: w.Provider, Revision: w.Revision},
		Facts:    FactSet{w.Facts},
		Label:    checkfu.Label(w.Label),
		Attester: w.KeyID,
		IssuedAt: time.Unix(int64(w.IssuedAt), 0).UTC(),
		Evidence: make([]Digest, len(w.Evidence)),
	}
	for i, d := range w.Evidence {
		r.Evidence[i] = d
	}
	return r
}

// MarshalBinary returns the canonical binary encoding of r, the payload a
// receipt signs. The layout is in docs/receipts.md. It refuses a record
// that fails [Record.Check].
func (r Record) MarshalBinary() ([]byte, error) {
	w, err := r.toWire()
	if err != nil {
		return nil, err
	}
	return wire.Encode(w)
}

// ParseRecord decodes a receipt payload strictly. It refuses, with
// [CodePayloadNoncanonical], truncated input, trailing bytes, an unknown
// version, unknown fact bits or labels, strings that are empty, too long,
// not UTF-8 or hold control characters, and any input that does not
// re-encode to exactly the same bytes. ParseRecord checks no signature:
// [Verify] calls it only on signed bytes.
func ParseRecord(payload []byte) (Record, error) {
	w, err := wire.Parse(payload)
	if err != nil {
		return Record{}, err
	}
	return fromWire(&w), nil
}
