package edge

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"unicode/utf16"

	"github.com/checkfu/checkfu/custody"
)

// utf16Bytes encodes s as UTF-16, little- or big-endian, the test's own
// encoder.
func utf16Bytes(s string, bigEndian bool) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// A provider that answers in UTF-16 (charset=utf-16, as some Windows and
// .NET services do) writes every character of an echoed credential as two
// or four bytes; a caller that decodes the charset reads it back. The
// edge looks for the UTF-16 forms, both byte orders, of a credential that
// is valid UTF-8.
func TestRefuseEchoUTF16(t *testing.T) {
	for _, tok := range []string{"ghp_EDGECANARY0123456789abcdefXYZ", "p\u00e4ss\u20ac\U0001F511word"} {
		s := custody.NewSecret([]byte(tok))
		for _, be := range []bool{false, true} {
			body := utf16Bytes(`{"you_sent":"Bearer `+tok+`"}`, be)
			if err := refuseEcho(s, testBinding(), http.Header{}, body); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("%q in UTF-16 (big-endian %v): %v, want %s", tok, be, err, CodeCredentialEchoed)
			}
		}
		if err := refuseEcho(s, testBinding(), http.Header{}, utf16Bytes(`{"ok":true}`, false)); err != nil {
			t.Errorf("clean UTF-16 body refused: %v", err)
		}
		s.Destroy()
	}
}

// The UTF-16 and decimal byte-list forms live in echoForms' one buffer
// too: the buffer never grows, so clearing it clears every form.
func TestEchoFormsUTF16ClearedWithBuf(t *testing.T) {
	for _, tok := range []string{"abc", "abc\u00e9\u20ac\U0001F511", "ghp_EDGECANARY0123456789abcdefXYZ", "\u00ff\u00fe\u00fd"} {
		forms, buf := echoForms([]byte(tok))
		if want := 1 + 2 + 6 + 2 + len(decimalSeps); len(forms) != want {
			t.Fatalf("token %q: %d forms, want %d", tok, len(forms), want)
		}
		clear(buf)
		for i, f := range forms[1:] {
			if len(f) == 0 || !bytes.Equal(f, make([]byte, len(f))) {
				t.Fatalf("token %q: form %d is %q after clearing the buffer", tok, i+1, f)
			}
		}
	}
}
