package edge

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// The HTTP client canonicalises every response header name before the edge
// sees it ("x-echo-ghp_AbC" arrives as "X-Echo-Ghp_abc"), so a provider
// that echoes the credential into a header name hands the caller the
// credential with its case folded: all of it for a token in one case, most
// of its entropy otherwise. Header names are searched without regard to
// case.
func TestRefuseEchoFoldedHeaderName(t *testing.T) {
	for _, tok := range []string{"ghp_EDGECANARY0123456789abcdefXYZ", "AKIAIOSFODNN7EXAMPLE"} {
		s := custody.NewSecret([]byte(tok))
		for _, name := range []string{"x-echo-" + tok, tok, "x-" + string(bytes.ToUpper([]byte(hex.EncodeToString([]byte(tok)))))} {
			canon := http.CanonicalHeaderKey(name)
			if err := refuseEcho(s, testBinding(), http.Header{canon: {"1"}}, nil); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("header name %q (sent as %q): %v, want %s", canon, name, err, CodeCredentialEchoed)
			}
		}
		if err := refuseEcho(s, testBinding(), http.Header{"X-Request-Id": {"1"}}, nil); err != nil {
			t.Errorf("clean header name refused: %v", err)
		}
		s.Destroy()
	}
}
