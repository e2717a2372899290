package signing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// envJSON builds an envelope's JSON text from its three fields, with no
// checks, so the tests can put anything in any of them.
func envJSON(payloadType, payload, keyid, sig string) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []byte(`{"payloadType":` + q(payloadType) + `,"payload":` + q(payload) +
		`,"signatures":[{"keyid":` + q(keyid) + `,"sig":` + q(sig) + `}]}`)
}

// maxRefusalText bounds the text of any refusal of a hostile envelope:
// the fixed text plus a few quoted strings, each cut by checkfu.Quote.
const maxRefusalText = 1024

// TestRefusalTextIsBounded: an envelope is attacker text. Each field,
// and each unknown key, filled to the envelope limit must give a refusal
// whose text is bounded, since refusals reach logs, events and operator
// output.
func TestRefusalTextIsBounded(t *testing.T) {
	a := testSigner(1)
	set := testSet(t, a)
	good := mustSign(t, a, []byte("hello"))
	var e envelopeJSON
	if err := json.Unmarshal(good, &e); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("A", MaxEnvelopeSize-512)
	tests := []struct {
		name string
		env  []byte
		want checkfu.Code
	}{
		{"huge payloadType", envJSON("checkfu."+big, e.Payload, e.Signatures[0].KeyID, e.Signatures[0].Sig), CodePayloadTypeMismatch},
		{"huge keyid", envJSON(testType, e.Payload, big, e.Signatures[0].Sig), CodeEnvelopeMalformed},
		{"huge unknown top-level key", []byte(`{"` + big + `":""}`), CodeEnvelopeMalformed},
		{"huge unknown signature key", []byte(`{"payloadType":"x","payload":"","signatures":[{"` + big + `":""}]}`), CodeEnvelopeMalformed},
		{"huge escaped payloadType", envJSON("checkfu.\u00e9"+strings.Repeat("\u2028", (MaxEnvelopeSize-512)/6), e.Payload, e.Signatures[0].KeyID, e.Signatures[0].Sig), CodePayloadTypeMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.env) > MaxEnvelopeSize {
				t.Fatalf("envelope is %d bytes, more than MaxEnvelopeSize", len(tt.env))
			}
			_, _, err := set.VerifyPayload(tt.env, testType)
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyPayload = %v, want %s", trim(err), tt.want)
			}
			if n := len(err.Error()); n > maxRefusalText {
				t.Fatalf("refusal text is %d bytes, more than %d: %s", n, maxRefusalText, trim(err))
			}
		})
	}
}

// TestParseRefusalTextIsBounded: a key id and an attester name of 1 MiB
// are refused with bounded text. A key id reaches ParseKeyID from any
// JSON holding a KeyID (UnmarshalText); a set file is the operator's,
// but its refusal is printed whole.
func TestParseRefusalTextIsBounded(t *testing.T) {
	big := strings.Repeat("\u2028", 1<<20/3)
	var id KeyID
	err := json.Unmarshal([]byte(`"`+big+`"`), &id)
	if !errors.Is(err, CodeKeyInvalid) || len(err.Error()) > maxRefusalText {
		t.Errorf("KeyID.UnmarshalText = %.200v (%d bytes), want %s in at most %d bytes", err, len(err.Error()), CodeKeyInvalid, maxRefusalText)
	}
	_, err = ParseAttesterSet(setJSON(entry{Name: big, PublicKeyPEM: string(testSigner(1).PublicKeyPEM())}))
	if !errors.Is(err, CodeAttesterSetInvalid) || len(err.Error()) > maxRefusalText {
		t.Errorf("ParseAttesterSet(huge name) = %.200v (%d bytes), want %s in at most %d bytes", err, len(err.Error()), CodeAttesterSetInvalid, maxRefusalText)
	}
}

func trim(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}
