package custody

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
)

// Mutant: dropping any form from refuseEcho's list (raw, lower or upper
// hex, standard or URL base64), or matching the padded base64 instead of
// the unpadded, makes this test fail.
func TestRefuseEchoForms(t *testing.T) {
	tok := []byte("tok+/en?\xfa") // 9 bytes: base64 without padding; 10 below needs it
	for _, tok := range [][]byte{tok, append(tok, '!')} {
		s := NewSecret(bytes.Clone(tok))
		lower := hex.EncodeToString(tok)
		for name, form := range map[string]string{
			"raw":           string(tok),
			"hex":           lower,
			"HEX":           string(bytes.ToUpper([]byte(lower))),
			"base64":        base64.StdEncoding.EncodeToString(tok),
			"base64 raw":    base64.RawStdEncoding.EncodeToString(tok),
			"base64url":     base64.URLEncoding.EncodeToString(tok),
			"base64url raw": base64.RawURLEncoding.EncodeToString(tok),
		} {
			body := []byte(`{"x":"` + form + `"}`)
			if err := refuseEcho(s, testBinding(), http.Header{}, body); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("len %d, %s form in the body: %v, want %s", len(tok), name, err, CodeCredentialEchoed)
			}
			if err := refuseEcho(s, testBinding(), http.Header{"X-Echo": {form}}, nil); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("len %d, %s form in a header: %v, want %s", len(tok), name, err, CodeCredentialEchoed)
			}
		}
		if err := refuseEcho(s, testBinding(), http.Header{"X-Ok": {"fine"}}, []byte(`{"ok":true}`)); err != nil {
			t.Errorf("clean response refused: %v", err)
		}
		s.Destroy()
	}
}
