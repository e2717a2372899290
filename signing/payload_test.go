package signing_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/signing"
)

func TestSignVerifyPayload(t *testing.T) {
	s, _, err := signing.GenerateSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signing.ParseAttesterSet([]byte(`{"attesters":[{"name":"deploy","public_key_pem":` + jsonString(string(s.PublicKeyPEM())) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const typ = "checkfu.test-statement.v1"
	env, err := s.SignPayload(typ, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	a, payload, err := set.VerifyPayload(env, typ)
	if err != nil || a.Name != "deploy" || string(payload) != "hello" {
		t.Fatalf("VerifyPayload = %v, %q, %v", a, payload, err)
	}
	if _, _, err := set.VerifyPayload(env, "checkfu.other.v1"); !errors.Is(err, signing.CodePayloadTypeMismatch) {
		t.Errorf("other type: %v", err)
	}
	if _, _, err := (*signing.AttesterSet)(nil).VerifyPayload(env, typ); !errors.Is(err, signing.CodeAttesterUnknown) {
		t.Errorf("unknown signer: %v", err)
	}
	for _, typ := range []string{"other.v1", "", "checkfu." + strings.Repeat("x", signing.MaxPayloadTypeSize)} {
		if _, err := s.SignPayload(typ, []byte("x")); !errors.Is(err, signing.CodePayloadTypeInvalid) {
			t.Errorf("sign type %q: %v", typ, err)
		}
		if _, _, err := set.VerifyPayload(env, typ); !errors.Is(err, signing.CodePayloadTypeInvalid) {
			t.Errorf("verify type %q: %v", typ, err)
		}
	}
	other, _, _ := signing.GenerateSigner(nil)
	forged, _ := other.SignPayload(typ, []byte("hello"))
	// Splice the deployment key id onto the other key's signature.
	var e map[string]any
	_ = jsonUnmarshal(forged, &e)
	e["signatures"].([]any)[0].(map[string]any)["keyid"] = s.KeyID().String()
	if _, _, err := set.VerifyPayload(jsonMarshal(e), typ); !errors.Is(err, signing.CodeSignatureInvalid) {
		t.Errorf("forged: %v", err)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func jsonMarshal(v any) []byte { b, _ := json.Marshal(v); return b }
