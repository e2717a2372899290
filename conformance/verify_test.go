package conformance

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/sigtest"
	"github.com/checkfu/checkfu/signing"
)

// TestCertifyRefusals is the acceptance table: each row changes one thing
// about a receipt that certifies daytona2 and names the code it must get.
//
// The mutants this table kills are listed in mutants_test.go.
func TestCertifyRefusals(t *testing.T) {
	a, b, outsider := testSigner(1), testSigner(2), testSigner(3)
	set := testSet(t, a, b)
	good := goodRecord()
	withRecord := func(f func(*Record)) []byte {
		r := good
		r.Evidence = append([]Digest(nil), good.Evidence...)
		f(&r)
		return mustSign(t, a, r)
	}
	goodPayload := mustPayload(t, Record{Target: good.Target, Facts: good.Facts, Label: good.Label, Attester: a.KeyID(), IssuedAt: good.IssuedAt, Evidence: good.Evidence})

	tests := []struct {
		name     string
		set      *signing.AttesterSet
		envelope []byte
		target   checkfu.ProviderRevision
		want     checkfu.Code // "" for certified
		msg      string       // substring the refusal must hold
	}{
		{name: "certifies", envelope: mustSign(t, a, good)},
		{name: "second attester certifies", envelope: mustSign(t, b, good)},
		{name: "empty built-in set", set: BuiltinAttesters(), envelope: mustSign(t, a, good), want: signing.CodeAttesterUnknown},
		{name: "nil set", set: (*signing.AttesterSet)(nil), envelope: mustSign(t, a, good), want: signing.CodeAttesterUnknown},
		{name: "key outside the set", envelope: mustSign(t, outsider, good), want: signing.CodeAttesterUnknown},
		{name: "other revision", envelope: mustSign(t, a, good), target: checkfu.ProviderRevision{Provider: daytona2.Provider, Revision: "3"}, want: CodeRevisionMismatch},
		{name: "revision prefix", envelope: withRecord(func(r *Record) { r.Target.Revision = "20" }), want: CodeRevisionMismatch},
		{name: "revision semver-ish", envelope: withRecord(func(r *Record) { r.Target.Revision = "2.0" }), want: CodeRevisionMismatch},
		{name: "revision wildcard", envelope: withRecord(func(r *Record) { r.Target.Revision = "*" }), want: CodeRevisionMismatch},
		{name: "same revision, worker provider", envelope: mustSign(t, a, good), target: checkfu.ProviderRevision{Provider: "checkfu:daytona-worker-provider", Revision: "2"}, want: CodeProviderMismatch},
		{name: "provider prefix", envelope: withRecord(func(r *Record) { r.Target.Provider = "checkfu:daytona" }), want: CodeProviderMismatch},
		{name: "provider case", envelope: withRecord(func(r *Record) { r.Target.Provider = "checkfu:Daytona-provider" }), want: CodeProviderMismatch},
		{name: "mock evidence", envelope: withRecord(func(r *Record) { r.Label = checkfu.LabelMock }), want: CodeLabelNotProduction},
		{name: "isolated evidence", envelope: withRecord(func(r *Record) { r.Label = checkfu.LabelIsolated }), want: CodeLabelNotProduction},
		{name: "no facts", envelope: withRecord(func(r *Record) { r.Facts = FactSet{} }), want: CodeFactMissing},
		{name: "trailing payload bytes", envelope: signPayload(a, PayloadType, append(append([]byte(nil), goodPayload...), 0)), want: CodePayloadNoncanonical, msg: "1 trailing bytes"},
		{name: "unknown version", envelope: signPayload(a, PayloadType, append([]byte{2}, goodPayload[1:]...)), want: CodePayloadNoncanonical, msg: "unknown record version 2"},
		{name: "unknown fact bit", envelope: signPayload(a, PayloadType, setFactByte(goodPayload, 0x3f)), want: CodePayloadNoncanonical, msg: "unknown fact bits"},
		{name: "other payload type", envelope: signPayload(a, "checkfu.sandbox-egress-conformance.v2", goodPayload), want: signing.CodePayloadTypeMismatch},
		{name: "record names another key", envelope: signPayload(a, PayloadType, mustPayload(t, func() Record { r := good; r.Attester = b.KeyID(); return r }())), want: CodeKeyIDMismatch},
		{name: "signed by another key under a listed key id", envelope: relabel(t, mustSign(t, outsider, good), a.KeyID()), want: signing.CodeSignatureInvalid},
		{name: "R of small order", envelope: withSig(t, mustSign(t, a, good), sigtest.SignWithIdentityR(testPriv(1), pae(PayloadType, goodPayload))), want: signing.CodeSignatureInvalid},
		{name: "two signatures", envelope: twoSigs(t, mustSign(t, a, good)), want: signing.CodeEnvelopeMalformed},
		{name: "not JSON", envelope: []byte("not json"), want: signing.CodeEnvelopeMalformed},
		{name: "payloadType key case", envelope: []byte(strings.Replace(string(mustSign(t, a, good)), `"payloadType"`, `"PayloadType"`, 1)), want: signing.CodeEnvelopeMalformed},
		{name: "duplicate payload key", envelope: []byte(strings.Replace(string(mustSign(t, a, good)), `"payload":`, `"payload": "AA==", "payload":`, 1)), want: signing.CodeEnvelopeMalformed},
		{name: "trailing JSON", envelope: append(mustSign(t, a, good), "{}"...), want: signing.CodeEnvelopeMalformed},
		{name: "oversized", envelope: make([]byte, signing.MaxEnvelopeSize+1), want: signing.CodeEnvelopeMalformed, msg: "more than"},
		{name: "line break in payload base64", envelope: []byte(strings.Replace(string(mustSign(t, a, good)), `"payload": "AR`, `"payload": "A\nR`, 1)), want: signing.CodeEnvelopeMalformed, msg: "payload is not standard padded base64"},
		{name: "URL-safe base64 signature", envelope: urlSafeSig(t, mustSign(t, a, good)), want: signing.CodeEnvelopeMalformed, msg: "signature is not standard padded base64"},
	}
	for _, f := range Facts() {
		tests = append(tests, struct {
			name     string
			set      *signing.AttesterSet
			envelope []byte
			target   checkfu.ProviderRevision
			want     checkfu.Code
			msg      string
		}{name: "missing " + string(f), envelope: withRecord(func(r *Record) { r.Facts = r.Facts.Without(f) }), want: CodeFactMissing, msg: string(f)})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, target := set, daytona2
			if tt.set != nil || tt.name == "nil set" {
				s = tt.set
			}
			if tt.target != (checkfu.ProviderRevision{}) {
				target = tt.target
			}
			r, err := Certify(s, tt.envelope, target)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Certify = %v, want certified", err)
				}
				if got := EffectiveGrade(target, checkfu.SecurityBoundary, r); got != checkfu.SecurityBoundary {
					t.Fatalf("EffectiveGrade = %v, want security_boundary", got)
				}
				return
			}
			if r != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Certify = %v, %v; want refusal %s", r, err, tt.want)
			}
			if code, _ := checkfu.CodeOf(err); code != tt.want {
				t.Fatalf("CodeOf = %s, want %s", code, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q does not mention %q", err, tt.msg)
			}
			if got := EffectiveGrade(target, checkfu.SecurityBoundary, r); got != checkfu.AdvisoryFilter {
				t.Fatalf("EffectiveGrade after refusal = %v, want advisory_filter", got)
			}
		})
	}
}

func setFactByte(payload []byte, facts byte) []byte {
	p := append([]byte(nil), payload...)
	off := 1 + 1 + int(p[1])
	off += 1 + int(p[off])
	p[off] = facts
	return p
}

func decodeEnv(t testing.TB, env []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(env, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encodeEnv(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// relabel replaces the envelope's keyid.
func relabel(t testing.TB, env []byte, id signing.KeyID) []byte {
	m := decodeEnv(t, env)
	m["signatures"].([]any)[0].(map[string]any)["keyid"] = id.String()
	return encodeEnv(t, m)
}

// withSig replaces the envelope's signature.
func withSig(t testing.TB, env []byte, sig []byte) []byte {
	m := decodeEnv(t, env)
	m["signatures"].([]any)[0].(map[string]any)["sig"] = base64.StdEncoding.EncodeToString(sig)
	return encodeEnv(t, m)
}

// urlSafeSig re-encodes the signature with the URL-safe alphabet (the
// signature of goodRecord by testSigner(1) holds a '+' or '/'; the test
// checks).
func urlSafeSig(t testing.TB, env []byte) []byte {
	m := decodeEnv(t, env)
	sig := m["signatures"].([]any)[0].(map[string]any)
	std := sig["sig"].(string)
	if !strings.ContainsAny(std, "+/") {
		t.Fatal("signature has no '+' or '/'; pick another record")
	}
	raw, _ := base64.StdEncoding.DecodeString(std)
	sig["sig"] = base64.URLEncoding.EncodeToString(raw)
	return encodeEnv(t, m)
}

func twoSigs(t testing.TB, env []byte) []byte {
	m := decodeEnv(t, env)
	sigs := m["signatures"].([]any)
	m["signatures"] = append(sigs, sigs[0])
	return encodeEnv(t, m)
}

// TestBitFlipSweep flips every bit of the payload and of the signature of
// a certifying receipt: each must be refused as signature_invalid, since
// the signature is checked before the payload is parsed. Then it flips
// every bit of the envelope's JSON text: none may still certify.
func TestBitFlipSweep(t *testing.T) {
	a := testSigner(1)
	set := testSet(t, a)
	env := mustSign(t, a, goodRecord())
	if _, err := Certify(set, env, daytona2); err != nil {
		t.Fatal(err)
	}
	m := decodeEnv(t, env)
	sigObj := m["signatures"].([]any)[0].(map[string]any)
	for _, field := range []string{"payload", "sig"} {
		holder := m
		if field == "sig" {
			holder = sigObj
		}
		orig := holder[field].(string)
		raw, _ := base64.StdEncoding.DecodeString(orig)
		for i := 0; i < len(raw)*8; i++ {
			flipped := append([]byte(nil), raw...)
			flipped[i/8] ^= 1 << (i % 8)
			holder[field] = base64.StdEncoding.EncodeToString(flipped)
			_, err := Verify(set, encodeEnv(t, m))
			if !errors.Is(err, signing.CodeSignatureInvalid) {
				t.Fatalf("%s bit %d flipped: %v, want %s", field, i, err, signing.CodeSignatureInvalid)
			}
		}
		holder[field] = orig
	}
	for i := 0; i < len(env)*8; i++ {
		flipped := append([]byte(nil), env...)
		flipped[i/8] ^= 1 << (i % 8)
		if _, err := Certify(set, flipped, daytona2); err == nil {
			// Only a flip that leaves the JSON meaning unchanged could
			// pass, and there is none: whitespace flips give non-JSON.
			t.Fatalf("envelope bit %d flipped (%q) still certifies", i, flipped[i/8])
		}
	}
}

func TestReceiptAccessorsCopy(t *testing.T) {
	a := testSigner(1)
	r, err := Verify(testSet(t, a), mustSign(t, a, goodRecord()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Attester().Name != "a0" || r.Attester().KeyID != a.KeyID() {
		t.Fatalf("Attester = %+v", r.Attester())
	}
	rec := r.Record()
	rec.Evidence[0] = Digest{}
	rec.Target.Revision = "3"
	r.Attester().PublicKey[0] ^= 1
	if err := r.Certifies(daytona2); err != nil {
		t.Fatalf("mutating copies changed the receipt: %v", err)
	}
	if r.Record().Evidence[0] == (Digest{}) {
		t.Fatal("Record shares its evidence slice")
	}
	var zero Receipt
	if err := zero.Certifies(daytona2); !errors.Is(err, CodeReceiptMissing) {
		t.Fatalf("zero Receipt: %v", err)
	}
	if err := (*Receipt)(nil).Certifies(daytona2); !errors.Is(err, CodeReceiptMissing) {
		t.Fatalf("nil Receipt: %v", err)
	}
}

// An AttesterSet is read-only after loading, so concurrent verification
// is safe (run with -race).
func TestVerifyConcurrent(t *testing.T) {
	a := testSigner(1)
	set := testSet(t, a)
	env := mustSign(t, a, goodRecord())
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 20 {
				if _, e := Certify(set, env, daytona2); e != nil {
					err = e
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
