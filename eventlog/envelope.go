package eventlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/cryptobyte"

	"github.com/checkfu/checkfu"
)

// A Hash is a SHA-256 value: the chain hash of a record, or a digest an
// envelope commits to.
type Hash [32]byte

// HashFromBytes returns the stored hash b as a Hash, for stores that read
// hashes back from a column. A stored value of the wrong length becomes
// the zero hash, which matches no record, so verification names its seq
// instead of the read failing.
func HashFromBytes(b []byte) Hash {
	var h Hash
	if len(b) == len(h) {
		copy(h[:], b)
	}
	return h
}

// IsZero reports whether h is all zero bytes (the "previous hash" of seq 1).
func (h Hash) IsZero() bool { return h == Hash{} }

// String returns h in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler (lower-case hex).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: exactly 64 lower-case
// hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) != 64 || !bytes.Equal(bytes.ToLower(b), b) {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: %s is not a hash (want 64 lower-case hex digits)", checkfu.Quote(string(b)))
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: %s is not a hash (want 64 lower-case hex digits)", checkfu.Quote(string(b)))
	}
	return nil
}

// A ContentMode says what an envelope holds about its event's content.
type ContentMode uint8

const (
	// ContentNone means the event had no content.
	ContentNone ContentMode = iota
	// ContentSealed means the content was sealed under its own data key
	// and stored beside the envelope; the envelope commits to the sealed
	// bytes. Once shredded, the sealed bytes are gone and the envelope
	// still verifies.
	ContentSealed
	// ContentDigestOnly means the log is zero-data-retention: only a keyed
	// digest of the content was kept, never the content.
	ContentDigestOnly
	contentModeEnd
)

var contentModeNames = [...]string{ContentNone: "none", ContentSealed: "sealed", ContentDigestOnly: "digest_only"}

// String returns "none", "sealed" or "digest_only".
func (m ContentMode) String() string {
	if m >= contentModeEnd {
		return fmt.Sprintf("content_mode(%d)", uint8(m))
	}
	return contentModeNames[m]
}

// MarshalText implements encoding.TextMarshaler.
func (m ContentMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// envelopeVersion is the first byte of every envelope the log writes.
//
// Version 2 added the rest of the request context (role, tenant,
// workspace, project, session_id) after the 20 identifier fields of
// version 1; version 3 added the channel after them. Envelopes of
// versions 1 and 2 are still read and verified, with the fields a later
// version added empty, so a log written before a change keeps verifying;
// no envelope of an older version is written any more. A record's
// version is one of the bytes its hash covers, so changing it is a
// change like any other.
const (
	envelopeVersion   = 3
	envelopeVersionV2 = 2
	envelopeVersionV1 = 1
)

// chainDomain separates record hashes from every other SHA-256 use.
const chainDomain = "checkfu/eventlog/chain/v1\x00"

// minTime and maxTime bound event times to what an int64 of Unix
// nanoseconds holds, from 1970 on.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Unix(0, 1<<63-1)
)

// An envelope is the durable, hashed part of one record.
type envelope struct {
	session string
	seq     uint64
	prev    Hash
	event   Event // Content always nil
	mode    ContentMode
	mac     Hash // keyed digest of the content; zero when mode is ContentNone
	sealed  Hash // SHA-256 of the stored content row; zero unless ContentSealed
	// shredOf is the seq whose content a KindShred event shredded, and
	// shredTag the tag of [Keys.shredTag] over it; zero for every other
	// kind.
	shredOf  uint64
	shredTag Hash
	// old is the version env was read from when it is older than the
	// current one ([envelopeVersionV1] or [envelopeVersionV2]); env is
	// encoded again as that version, without the fields later versions
	// added (which decoding left empty). The zero envelope is of the
	// current version.
	old uint8
}

// version returns the version env is encoded as.
func (env *envelope) version() uint8 {
	if env.old != 0 {
		return env.old
	}
	return envelopeVersion
}

// fields returns the envelope strings of env's version, in order.
func (env *envelope) fields() []struct {
	name string
	v    *string
} {
	all := env.event.identFields()
	switch env.old {
	case envelopeVersionV1:
		return all[:v1Fields]
	case envelopeVersionV2:
		return all[:v2Fields]
	}
	return all[:]
}

// encode returns the canonical binary form of env: a fixed-order record of
// big-endian integers, 32-byte hashes and uint16-length-prefixed strings.
// decode(encode(env)) == env for every valid env.
func (env *envelope) encode() []byte {
	e := &env.event
	fields := env.fields()
	size := 1 + 2 + len(env.session) + 8 + 32 + 8 + 3 + 1 + 64 + 8 + 32
	for _, f := range fields {
		size += 2 + len(*f.v)
	}
	b := make([]byte, 0, size)
	b = append(b, env.version())
	b = appendString(b, env.session)
	b = binary.BigEndian.AppendUint64(b, env.seq)
	b = append(b, env.prev[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	b = append(b, uint8(e.Kind), uint8(e.Label), uint8(e.Decision))
	for _, f := range fields {
		b = appendString(b, *f.v)
	}
	b = append(b, uint8(env.mode))
	switch env.mode {
	case ContentSealed:
		b = append(b, env.mac[:]...)
		b = append(b, env.sealed[:]...)
	case ContentDigestOnly:
		b = append(b, env.mac[:]...)
	}
	if e.Kind == KindShred {
		b = binary.BigEndian.AppendUint64(b, env.shredOf)
		b = append(b, env.shredTag[:]...)
	}
	return b
}

// appendString appends s with its uint16 length. Callers have checked
// that s is at most MaxIdentifier bytes.
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// A reader reads length-prefixed strings out of one envelope as substrings
// of a single string copy of it, so decoding allocates once, not per field.
type reader struct {
	s   cryptobyte.String
	all string // string(original bytes)
}

func (r *reader) readString(out *string) bool {
	off := len(r.all) - len(r.s) + 2
	var v cryptobyte.String
	if !r.s.ReadUint16LengthPrefixed(&v) {
		return false
	}
	str := r.all[off : off+len(v)]
	if !utf8.ValidString(str) {
		return false
	}
	*out = str
	return true
}

// decodeEnvelope parses b strictly: a known version, defined enums, valid
// identifiers, no trailing bytes, and bytes that re-encode to exactly b.
func decodeEnvelope(b []byte) (*envelope, error) {
	bad := func(what string) error {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: malformed envelope: %s", what)
	}
	r := &reader{s: cryptobyte.String(b), all: string(b)}
	s := &r.s
	var env envelope
	var version, kind, label, decision, mode uint8
	var nanos uint64
	var prev []byte
	if !s.ReadUint8(&version) {
		return nil, bad("empty")
	}
	switch version {
	case envelopeVersion:
	case envelopeVersionV1, envelopeVersionV2:
		env.old = version
	default:
		return nil, bad("unknown version")
	}
	if !r.readString(&env.session) || !s.ReadUint64(&env.seq) || !s.ReadBytes(&prev, 32) ||
		!s.ReadUint64(&nanos) || !s.ReadUint8(&kind) || !s.ReadUint8(&label) || !s.ReadUint8(&decision) {
		return nil, bad("truncated header")
	}
	copy(env.prev[:], prev)
	e := &env.event
	e.Time = time.Unix(0, int64(nanos)).UTC()
	e.Kind, e.Label, e.Decision = Kind(kind), checkfu.Label(label), Decision(decision)
	for _, f := range env.fields() {
		if !r.readString(f.v) {
			return nil, bad("truncated or non-UTF-8 field " + f.name)
		}
	}
	if !s.ReadUint8(&mode) {
		return nil, bad("missing content mode")
	}
	env.mode = ContentMode(mode)
	var mac, sealed []byte
	switch env.mode {
	case ContentNone:
	case ContentSealed:
		if !s.ReadBytes(&mac, 32) || !s.ReadBytes(&sealed, 32) {
			return nil, bad("truncated content digests")
		}
	case ContentDigestOnly:
		if !s.ReadBytes(&mac, 32) {
			return nil, bad("truncated content digest")
		}
	default:
		return nil, bad("unknown content mode")
	}
	copy(env.mac[:], mac)
	copy(env.sealed[:], sealed)
	if e.Kind == KindShred {
		var tag []byte
		if !s.ReadUint64(&env.shredOf) || !s.ReadBytes(&tag, 32) {
			return nil, bad("truncated shred target")
		}
		copy(env.shredTag[:], tag)
		if env.shredOf == 0 || env.shredOf >= env.seq || env.mode != ContentNone {
			return nil, bad("shred event names no earlier seq, or has content")
		}
	}
	if !s.Empty() {
		return nil, bad("trailing bytes")
	}
	if err := CheckSession(env.session); err != nil {
		return nil, bad("invalid session id")
	}
	if env.seq == 0 {
		return nil, bad("seq 0")
	}
	if err := e.Validate(); err != nil {
		return nil, bad("invalid event: " + err.Error())
	}
	if !bytes.Equal(env.encode(), b) {
		return nil, bad("not canonical")
	}
	return &env, nil
}

// chainHash returns the record hash of an encoded envelope.
func chainHash(encoded []byte) Hash {
	h := sha256.New()
	h.Write([]byte(chainDomain))
	h.Write(encoded)
	var out Hash
	h.Sum(out[:0])
	return out
}

// sealedDigest returns what an envelope commits to for a stored content
// row: SHA-256 over the length-prefixed wrapped data key and ciphertext.
func sealedDigest(dataKey, sealed []byte) Hash {
	var b cryptobyte.Builder
	b.AddBytes([]byte("checkfu/eventlog/content/v1\x00"))
	b.AddUint32LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(dataKey) })
	b.AddUint32LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(sealed) })
	return sha256.Sum256(b.BytesOrPanic())
}
