package conformance

import (
	"encoding/base64"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// maxRefusalText bounds the text of a refusal of hostile input: fixed
// text plus a few strings cut by checkfu.Quote.
const maxRefusalText = 1024

// TestStatementRefusalTextIsBounded: a statement, and a record handed to
// Sign, may come from the provider being attested. Every field filled
// with 1 MiB must give a refusal whose text is bounded.
func TestStatementRefusalTextIsBounded(t *testing.T) {
	big := strings.Repeat("\u2028", 1<<20/3)
	edit := func(old, new string) []byte {
		if !strings.Contains(goodStatement, old) {
			t.Fatalf("statement has no %q", old)
		}
		return []byte(strings.Replace(goodStatement, old, new, 1))
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"provider", func() error {
			_, err := ParseStatement(edit(`"checkfu:daytona-provider"`, `"`+big+`"`))
			return err
		}},
		{"revision", func() error {
			_, err := ParseStatement(edit(`"provider_revision": "2"`, `"provider_revision": "`+big+`"`))
			return err
		}},
		{"fact", func() error { _, err := ParseStatement(edit(`"default_deny"`, `"`+big+`"`)); return err }},
		{"digest", func() error { _, err := ParseStatement(edit(`"sha256:`, `"`+big+`sha256:`)); return err }},
		{"issued_at", func() error {
			_, err := ParseStatement(edit(`"2026-11-30T07:00:00Z"`, `"`+big+`"`))
			return err
		}},
		{"attester_key_id", func() error {
			_, err := ParseStatement(edit(`"label"`, `"attester_key_id": "`+big+`", "label"`))
			return err
		}},
		{"Sign: provider", func() error {
			r := goodRecord()
			r.Target.Provider = big
			_, err := Sign(testSigner(1), r)
			return err
		}},
		{"Sign: revision", func() error {
			r := goodRecord()
			r.Target.Revision = big
			_, err := Sign(testSigner(1), r)
			return err
		}},
		{"ParseFact", func() error { _, err := ParseFact(big); return err }},
		{"ParseDigest", func() error { _, err := ParseDigest(big); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if !errors.Is(err, CodeRecordInvalid) {
				t.Fatalf("err = %.200v, want %s", err, CodeRecordInvalid)
			}
			if n := len(err.Error()); n > maxRefusalText {
				t.Fatalf("refusal text is %d bytes, more than %d: %.200s", n, maxRefusalText, err)
			}
		})
	}
}

// TestNilReceiptAccessors: Verify and Certify return a nil *Receipt with
// every refusal; a caller reading it before its error must get the zero
// values, not a panic.
func TestNilReceiptAccessors(t *testing.T) {
	r, err := Verify(BuiltinAttesters(), []byte("{}"))
	if err == nil || r != nil {
		t.Fatalf("Verify = %v, %v; want a refusal and no receipt", r, err)
	}
	if a := r.Attester(); a.Name != "" || a.KeyID != (signing.KeyID{}) || a.PublicKey != nil {
		t.Errorf("nil Receipt's Attester = %+v, want the zero Attester", a)
	}
	if rec := r.Record(); rec.Target != (checkfu.ProviderRevision{}) || rec.Evidence != nil || rec.Facts.bits != 0 {
		t.Errorf("nil Receipt's Record = %+v, want the zero Record", rec)
	}
	if g := EffectiveGrade(daytona2, checkfu.SecurityBoundary, r); g != checkfu.AdvisoryFilter {
		t.Errorf("EffectiveGrade(nil receipt) = %v, want advisory_filter", g)
	}
}

// TestReceiptAttacksHeld is the red team's table of attacks on a receipt
// that certifies daytona2, by a hostile provider or a man in the middle
// who can alter the envelope: each must be refused with its code. The
// rows of TestCertifyRefusals are not repeated here.
func TestReceiptAttacksHeld(t *testing.T) {
	a, b := testSigner(1), testSigner(2)
	set := testSet(t, a, b)
	good := goodRecord()
	env := mustSign(t, a, good)
	rec := good
	rec.Attester = a.KeyID()
	payload := mustPayload(t, rec)
	replace := func(old, new string) []byte {
		if !strings.Contains(string(env), old) {
			t.Fatalf("envelope has no %q", old)
		}
		return []byte(strings.Replace(string(env), old, new, 1))
	}
	signed := func(p []byte) []byte { return signPayload(a, PayloadType, p) }
	// The evidence length field is the two bytes before the digests.
	evOff := len(payload) - 2 - 32*len(good.Evidence)
	withEvidenceLen := func(n int) []byte {
		p := append([]byte(nil), payload...)
		p[evOff], p[evOff+1] = byte(n>>8), byte(n)
		return p
	}
	withIssued := func(sec uint64) []byte {
		p := append([]byte(nil), payload...)
		for i := range 8 {
			p[evOff-8+i] = byte(sec >> (56 - 8*i))
		}
		return p
	}
	dupEvidence := append([]byte(nil), payload...)
	copy(dupEvidence[len(dupEvidence)-32:], dupEvidence[len(dupEvidence)-64:len(dupEvidence)-32])
	labelOff := 1 + 1 + len(good.Target.Provider) + 1 + len(good.Target.Revision) + 1

	tests := []struct {
		name     string
		envelope []byte
		target   checkfu.ProviderRevision
		want     checkfu.Code
	}{
		// Key confusion.
		{"signed by b, relabelled to a (both in the set)", relabel(t, mustSign(t, b, good), a.KeyID()), daytona2, signing.CodeSignatureInvalid},
		{"record names b, signed by a", signed(mustPayload(t, func() Record { r := good; r.Attester = b.KeyID(); return r }())), daytona2, CodeKeyIDMismatch},
		// Domain separation: a signature by a reviewed key under another
		// checkfu statement type, its payloadType rewritten.
		{"payloadType rewritten after signing", []byte(strings.Replace(string(signPayload(a, "checkfu.admission-record.v1", payload)), `"checkfu.admission-record.v1"`, `"`+PayloadType+`"`, 1)), daytona2, signing.CodeSignatureInvalid},
		// Signature malleability.
		{"S + L", withSig(t, env, addL(t, sigOf(t, env))), daytona2, signing.CodeSignatureInvalid},
		{"R sign bit flipped", withSig(t, env, func() []byte { s := sigOf(t, env); s[31] ^= 0x80; return s }()), daytona2, signing.CodeSignatureInvalid},
		{"signature cut to 63 bytes", withSig(t, env, sigOf(t, env)[:63]), daytona2, signing.CodeSignatureInvalid},
		{"signature with a 65th byte", withSig(t, env, append(sigOf(t, env), 0)), daytona2, signing.CodeSignatureInvalid},
		{"zero signature", withSig(t, env, make([]byte, 64)), daytona2, signing.CodeSignatureInvalid},
		// Envelope JSON.
		{"duplicate payload key spelled with an escape", replace(`"payload":`, `"payload": "AA==", "pay\u006coad":`), daytona2, signing.CodeEnvelopeMalformed},
		{"payload key differing in case beside the real one", replace(`"payload":`, `"Payload": "AA==", "payload":`), daytona2, signing.CodeEnvelopeMalformed},
		{"keyid key with a Kelvin sign", replace(`"keyid"`, `"\u212aeyid"`), daytona2, signing.CodeEnvelopeMalformed},
		{"keyid in upper case", replace(a.KeyID().String(), strings.ToUpper(a.KeyID().String())), daytona2, signing.CodeEnvelopeMalformed},
		{"no signatures", []byte(`{"payloadType":"` + PayloadType + `","payload":"AA==","signatures":[]}`), daytona2, signing.CodeEnvelopeMalformed},
		{"signatures null", []byte(`{"payloadType":"` + PayloadType + `","payload":"AA==","signatures":null}`), daytona2, signing.CodeEnvelopeMalformed},
		{"byte order mark", append([]byte("\ufeff"), env...), daytona2, signing.CodeEnvelopeMalformed},
		{"NUL after the object", append(append([]byte(nil), env...), 0), daytona2, signing.CodeEnvelopeMalformed},
		{"payload base64 without padding", []byte(strings.Replace(string(env), base64.StdEncoding.EncodeToString(payload), base64.RawStdEncoding.EncodeToString(payload), 1)), daytona2, signing.CodeEnvelopeMalformed},
		{"nested 100000 deep", []byte(`{"payloadType":` + strings.Repeat("[", 100000)), daytona2, signing.CodeEnvelopeMalformed},
		// Signed, but not a canonical record (a hostile attester key, or
		// a bug in another signer): truncation and field ranges.
		{"payload cut by one byte", signed(payload[:len(payload)-1]), daytona2, CodePayloadNoncanonical},
		{"payload cut after the key id", signed(payload[:evOff-8]), daytona2, CodePayloadNoncanonical},
		{"empty payload", signed(nil), daytona2, CodePayloadNoncanonical},
		{"evidence length 31 more than its digests", signed(withEvidenceLen(32*len(good.Evidence) + 31)), daytona2, CodePayloadNoncanonical},
		{"evidence length not a multiple of 32", signed(append(withEvidenceLen(32*len(good.Evidence)+1), 0)), daytona2, CodePayloadNoncanonical},
		{"repeated digest", signed(dupEvidence), daytona2, CodePayloadNoncanonical},
		{"label 3", signed(func() []byte { p := append([]byte(nil), payload...); p[labelOff] = 3; return p }()), daytona2, CodePayloadNoncanonical},
		{"label 0xff", signed(func() []byte { p := append([]byte(nil), payload...); p[labelOff] = 0xff; return p }()), daytona2, CodePayloadNoncanonical},
		{"issued_at 0", signed(withIssued(0)), daytona2, CodePayloadNoncanonical},
		{"issued_at after 9999", signed(withIssued(253402300800)), daytona2, CodePayloadNoncanonical},
		{"issued_at 2^64-1", signed(withIssued(1<<64 - 1)), daytona2, CodePayloadNoncanonical},
		// Exact pairs: the same-looking provider, spelled differently.
		{"provider in NFD", env, checkfu.ProviderRevision{Provider: "checkfu:daytona-provider\u0301", Revision: "2"}, CodeProviderMismatch},
		{"provider in full-width", env, checkfu.ProviderRevision{Provider: "checkfu:ｄaytona-provider", Revision: "2"}, CodeProviderMismatch},
		{"provider with a zero-width space", env, checkfu.ProviderRevision{Provider: "checkfu:daytona-provider\u200b", Revision: "2"}, CodeProviderMismatch},
		{"provider with a trailing NUL", env, checkfu.ProviderRevision{Provider: "checkfu:daytona-provider\x00", Revision: "2"}, CodeProviderMismatch},
		{"revision with a space", env, checkfu.ProviderRevision{Provider: daytona2.Provider, Revision: "2 "}, CodeRevisionMismatch},
		{"empty target", env, checkfu.ProviderRevision{}, CodeProviderMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Certify(set, tt.envelope, tt.target)
			if r != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Certify = %v, %.300v; want refusal %s", r, err, tt.want)
			}
			if code, _ := checkfu.CodeOf(err); code != tt.want {
				t.Fatalf("CodeOf = %s, want %s", code, tt.want)
			}
			if g := EffectiveGrade(tt.target, checkfu.SecurityBoundary, r); g != checkfu.AdvisoryFilter {
				t.Fatalf("EffectiveGrade = %v, want advisory_filter", g)
			}
		})
	}
	// The unaltered receipt still certifies, so each row refused for its
	// alteration.
	if _, err := Certify(set, env, daytona2); err != nil {
		t.Fatalf("the unaltered receipt: %v", err)
	}
}

func sigOf(t testing.TB, env []byte) []byte {
	t.Helper()
	m := decodeEnv(t, env)
	sig, err := base64.StdEncoding.DecodeString(m["signatures"].([]any)[0].(map[string]any)["sig"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// addL returns sig with L added to its S (little-endian), the
// non-canonical S that a non-strict verifier accepts as the same
// signature.
func addL(t testing.TB, sig []byte) []byte {
	t.Helper()
	le := func(b []byte) *big.Int {
		r := make([]byte, len(b))
		for i := range b {
			r[len(b)-1-i] = b[i]
		}
		return new(big.Int).SetBytes(r)
	}
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	s := new(big.Int).Add(le(sig[32:]), l)
	if s.BitLen() > 256 {
		t.Fatal("S + L does not fit in 32 bytes")
	}
	be := s.FillBytes(make([]byte, 32))
	out := append([]byte(nil), sig[:32]...)
	for i := range be {
		out = append(out, be[31-i])
	}
	return out
}

// TestHugeEnvelopesAreCheap: the largest envelope the verifier reads,
// filled with what makes its reader work hardest (the most signature
// objects, a string made only of escapes), is refused in linear time.
// Measured: about 10 ms and 3 ms; the bound is 100x that, a quadratic
// reader (256 KiB squared) would be far above it.
func TestHugeEnvelopesAreCheap(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"payloadType":"` + PayloadType + `","payload":"","signatures":[`)
	for n := 0; many.Len() < signing.MaxEnvelopeSize-64; n++ {
		if n > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`{"keyid":"","sig":""}`)
	}
	many.WriteString("]}")
	escapes := `{"payloadType":"` + strings.Repeat(`\u0041`, (signing.MaxEnvelopeSize-64)/6) + `","payload":"","signatures":[]}`
	set := testSet(t, testSigner(1))
	for name, env := range map[string]string{"signatures": many.String(), "escapes": escapes} {
		if len(env) > signing.MaxEnvelopeSize {
			t.Fatalf("%s: %d bytes, more than MaxEnvelopeSize", name, len(env))
		}
		start := time.Now()
		_, err := Verify(set, []byte(env))
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused in %v, want well under a second", name, d)
		}
		if !errors.Is(err, signing.CodeEnvelopeMalformed) {
			t.Errorf("%s: %.200v, want %s", name, err, signing.CodeEnvelopeMalformed)
		}
	}
}

// TestReceiptHasNoExpiry pins an open item (SECURITY.md, asset 4): a
// receipt is not checked against any clock. One issued at the first
// second the record can hold, and one issued at its last (9999), both
// certify; issued_at is information for people. Trust is withdrawn only
// by shipping an attester set without the key.
func TestReceiptHasNoExpiry(t *testing.T) {
	a := testSigner(1)
	set := testSet(t, a)
	for _, at := range []time.Time{time.Unix(1, 0).UTC(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		r := goodRecord()
		r.IssuedAt = at
		if _, err := Certify(set, mustSign(t, a, r), daytona2); err != nil {
			t.Errorf("issued at %s: %v; want certified (no clock is consulted)", at.Format(time.RFC3339), err)
		}
	}
}

// TestEnvelopeTextVariantsAreOneReceipt: the envelope's JSON text is not
// canonical (white space, member order and string escapes are free, as
// in DSSE); only the payload and signature are signed. A variant either
// is refused or verifies as exactly the same receipt, so nothing may
// identify a receipt by its envelope bytes, and nothing in the module
// does (receipts are kept per exact pair: cmd/checkfu's loadReceipts).
func TestEnvelopeTextVariantsAreOneReceipt(t *testing.T) {
	a := testSigner(1)
	set := testSet(t, a)
	env := mustSign(t, a, goodRecord())
	want, err := Verify(set, env)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeEnv(t, env)
	sig := m["signatures"].([]any)[0].(map[string]any)
	payload, keyid, sigText := m["payload"].(string), sig["keyid"].(string), sig["sig"].(string)
	escSig := strings.NewReplacer("/", `\/`, "+", `\u002b`).Replace(sigText)
	if escSig == sigText {
		t.Fatal("the signature has no '/' or '+'; pick another record")
	}
	variants := map[string]string{
		"compact":                 string(encodeEnv(t, m)),
		"members reordered":       `{"signatures":[{"sig":"` + sigText + `","keyid":"` + keyid + `"}],"payload":"` + payload + `","payloadType":"` + PayloadType + `"}`,
		"escaped member names":    `{"\u0070ayloadType":"` + PayloadType + `","payl\u006fad":"` + payload + `","signatures":[{"k\u0065yid":"` + keyid + `","\u0073ig":"` + sigText + `"}]}`,
		"escaped base64 and type": `{"payloadType":"checkfu\u002esandbox-egress-conformance.v1","payload":"\u0041` + payload[1:] + `","signatures":[{"keyid":"` + keyid + `","sig":"` + escSig + `"}]}`,
	}
	for name, v := range variants {
		got, err := Verify(set, []byte(v))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got.Record(), want.Record()) || got.Attester().KeyID != want.Attester().KeyID {
			t.Errorf("%s: verified as another receipt: %+v", name, got.Record())
		}
	}
}
