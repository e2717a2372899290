package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

func sample() Record {
	return Record{
		Provider: "checkfu:daytona-provider",
		Revision: "2",
		Facts:    KnownFacts,
		Label:    2,
		KeyID:    [32]byte{1, 2, 3},
		IssuedAt: 1796022000,
		Evidence: [][DigestSize]byte{{0xaa}, {0xbb}},
	}
}

func mustEncode(t testing.TB, r Record) []byte {
	t.Helper()
	b, err := Encode(&r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeLayout pins the byte layout documented in docs/receipts.md.
func TestEncodeLayout(t *testing.T) {
	r := sample()
	r.Provider, r.Revision, r.Evidence = "p", "r", [][DigestSize]byte{{0xee}}
	got := mustEncode(t, r)
	var want []byte
	want = append(want, 1)                                  // version
	want = append(want, 1, 'p')                             // provider
	want = append(want, 1, 'r')                             // revision
	want = append(want, 0x1f)                               // facts
	want = append(want, 2)                                  // label production
	want = append(want, r.KeyID[:]...)                      // key id
	want = append(want, 0, 0, 0, 0, 0x6b, 0x0d, 0x1e, 0xf0) // issued_at 1796022000
	want = append(want, 0, 32, 0xee)                        // evidence length, first digest byte
	want = append(want, make([]byte, 31)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode =\n%x\nwant\n%x", got, want)
	}
}

func TestParseRefusals(t *testing.T) {
	good := mustEncode(t, sample())
	// offsets in good
	facts := 1 + 1 + len("checkfu:daytona-provider") + 1 + 1
	label := facts + 1
	withByte := func(off int, v byte) []byte {
		b := bytes.Clone(good)
		b[off] = v
		return b
	}
	withProvider := func(p string) []byte {
		r := sample()
		r.Provider = "x"
		b := mustEncode(t, r)
		return append(append([]byte{1, byte(len(p))}, p...), b[3:]...)
	}
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"empty", nil, "payload is empty"},
		{"version 0", withByte(0, 0), "unknown record version 0"},
		{"version 2", withByte(0, 2), "unknown record version 2"},
		{"truncated", good[:len(good)-1], "truncated"},
		{"trailing byte", append(bytes.Clone(good), 0), "1 trailing bytes"},
		{"unknown fact bit 5", withByte(facts, 0x3f), "unknown fact bits 0x20"},
		{"unknown fact bit 7", withByte(facts, 0x80), "unknown fact bits 0x80"},
		{"unknown label", withByte(label, 3), "unknown label 3"},
		{"empty provider", withProvider(""), "provider \"\" is 0 bytes"},
		{"non-UTF-8 provider", withProvider("a\xffb"), "not valid UTF-8"},
		{"NUL in provider", withProvider("a\x00b"), "control character U+0000"},
		{"newline in provider", withProvider("a\nb"), "control character U+000A"},
		{"DEL in provider", withProvider("a\x7fb"), "control character U+007F"},
		{"C1 in provider", withProvider("a\u0085b"), "control character U+0085"},
		{"zero issued_at", func() []byte { r := sample(); r.IssuedAt = 0; return encodeUnchecked(r) }(), "issued_at 0"},
		{"issued_at past 9999", func() []byte { r := sample(); r.IssuedAt = MaxIssuedAt + 1; return encodeUnchecked(r) }(), "issued_at 253402300800"},
		{"no evidence", func() []byte { r := sample(); r.Evidence = nil; return encodeUnchecked(r) }(), "0 evidence digests"},
		{"repeated evidence", func() []byte { r := sample(); r.Evidence[1] = r.Evidence[0]; return encodeUnchecked(r) }(), "repeats"},
		{"partial digest", func() []byte {
			b := bytes.Clone(good)
			n := len(b)
			b[n-2*DigestSize-1]-- // evidence length 63
			return b[:n-1]
		}(), "whole number of 32-byte digests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			if !errors.Is(err, CodePayloadNoncanonical) {
				t.Fatalf("Parse = %v, want %s", err, CodePayloadNoncanonical)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Parse error %q does not contain %q", err, tt.msg)
			}
		})
	}
	if _, err := Parse(good); err != nil {
		t.Fatalf("Parse(good) = %v", err)
	}
}

// encodeUnchecked writes r in the version 1 layout without Check, to make
// out-of-range payloads.
func encodeUnchecked(r Record) []byte {
	b := []byte{1, byte(len(r.Provider))}
	b = append(b, r.Provider...)
	b = append(b, byte(len(r.Revision)))
	b = append(b, r.Revision...)
	b = append(b, r.Facts, r.Label)
	b = append(b, r.KeyID[:]...)
	for i := 7; i >= 0; i-- {
		b = append(b, byte(r.IssuedAt>>(8*i)))
	}
	n := len(r.Evidence) * DigestSize
	b = append(b, byte(n>>8), byte(n))
	for _, d := range r.Evidence {
		b = append(b, d[:]...)
	}
	return b
}

func TestParseCanonicalComparesBytes(t *testing.T) {
	good := mustEncode(t, sample())
	lax := func(b []byte) (Record, error) { return parseFields(b[:len(good)]) }
	_, err := parseCanonical(append(bytes.Clone(good), 0xff), lax)
	if !errors.Is(err, CodePayloadNoncanonical) || !strings.Contains(err.Error(), "does not re-encode") {
		t.Fatalf("parseCanonical with a lax parser = %v, want a re-encoding refusal", err)
	}
	if _, err := parseCanonical(good, lax); err != nil {
		t.Fatalf("parseCanonical(good) = %v", err)
	}
}

func TestCheckRefusesAsRecordInvalid(t *testing.T) {
	r := sample()
	r.Revision = ""
	if _, err := Encode(&r); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Encode(empty revision) = %v, want %s", err, CodeRecordInvalid)
	}
	r = sample()
	r.Revision = strings.Repeat("x", MaxString+1)
	if _, err := Encode(&r); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Encode(long revision) = %v", err)
	}
	r = sample()
	r.Evidence = make([][DigestSize]byte, MaxEvidence+1)
	for i := range r.Evidence {
		r.Evidence[i][0], r.Evidence[i][1] = byte(i), byte(i>>8)
	}
	if _, err := Encode(&r); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Encode(%d digests) = %v", len(r.Evidence), err)
	}
	r.Evidence = r.Evidence[:MaxEvidence]
	b, err := Encode(&r)
	if err != nil {
		t.Fatalf("Encode(%d digests) = %v", MaxEvidence, err)
	}
	if _, err := Parse(b); err != nil {
		t.Fatalf("Parse(max evidence) = %v", err)
	}
	var _ = checkfu.Refusal{}
}
