package edge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// wrap breaks s into lines of n characters, as MIME and PEM base64 do and
// as GitHub's contents API does to the files it returns.
func wrap(s string, n int, eol string) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + eol)
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// A provider returning stored bytes as line-wrapped base64 (a file's
// contents, a recorded request) can hold the credential's base64 broken
// across lines; every base64 decoder skips the line breaks. The edge
// looks with CR and LF removed too, also when the breaks are JSON
// escapes.
func TestRefuseEchoLineWrappedBase64(t *testing.T) {
	tok := "ghp_EDGECANARY0123456789abcdefXYZ"
	s := custody.NewSecret([]byte(tok))
	defer s.Destroy()
	for _, prefix := range []string{"", "x", "Authorization: Bearer "} {
		b64 := base64.StdEncoding.EncodeToString([]byte(prefix + tok + "\n"))
		for _, n := range []int{4, 8, 20, 60, 76} {
			for _, eol := range []string{"\n", "\r\n"} {
				wrapped := wrap(b64, n, eol)
				content, _ := json.Marshal(map[string]string{"encoding": "base64", "content": wrapped})
				for name, body := range map[string][]byte{"raw": []byte(wrapped), "json": content} {
					if err := refuseEcho(s, testBinding(), http.Header{}, body); !errors.Is(err, CodeCredentialEchoed) {
						t.Errorf("prefix %q, lines of %d, %q, %s: %v, want %s", prefix, n, eol, name, err, CodeCredentialEchoed)
					}
				}
			}
		}
	}
}
