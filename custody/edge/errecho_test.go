package edge

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/egress"
)

// Mutants: returning err unchanged when its text echoes the credential
// (for an upstream error or any other), or when the credential cannot be
// read to check an upstream error's text, makes this test fail; so does
// rewriting a refusal that does not echo it.
func TestWithholdErrorEcho(t *testing.T) {
	const tok = "tok/en+secret"
	s := custody.NewSecret([]byte(tok))
	up := func(text string) error {
		return &egress.UpstreamError{Code: egress.CodeUpstreamFailed, Target: "api.example.com:443", Err: errors.New(text)}
	}
	for _, tc := range []struct {
		name     string
		err      error
		withheld bool
		code     checkfu.Code
	}{
		{"upstream, raw", up(`malformed MIME header: missing colon: "Bearer ` + tok + `"`), true, ""},
		{"upstream, percent-encoded", up("debug=" + strings.ReplaceAll(tok, "/", "%2F")), true, ""},
		{"upstream, clean", up("connection reset by peer"), false, ""},
		{"other, raw", fmt.Errorf("wrapped: %s", tok), true, CodeCredentialEchoed},
		{"refusal, clean", checkfu.Refuse(CodeCredentialUnusable, "edge: not a header value"), false, CodeCredentialUnusable},
	} {
		got := withholdErrorEcho(s, testBinding(), tc.err)
		if strings.Contains(got.Error(), tok) || strings.Contains(got.Error(), "tok%2Fen") {
			t.Errorf("%s: %q still quotes the credential", tc.name, got)
		}
		if !tc.withheld && got != tc.err {
			t.Errorf("%s: %v rewritten to %v", tc.name, tc.err, got)
		}
		if tc.withheld && got == tc.err {
			t.Errorf("%s: %v passed on", tc.name, got)
		}
		if c, ok := egress.UpstreamCodeOf(tc.err); ok {
			if gc, _ := egress.UpstreamCodeOf(got); gc != c {
				t.Errorf("%s: upstream code %q became %v", tc.name, c, got)
			}
		}
		if tc.code != "" && !errors.Is(got, tc.code) {
			t.Errorf("%s: %v, want code %s", tc.name, got, tc.code)
		}
	}
	s.Destroy()
	// Unable to look: network text is withheld, this package's own
	// refusals keep their code.
	if got := withholdErrorEcho(s, testBinding(), up("connection reset by peer")); strings.Contains(got.Error(), "reset") {
		t.Errorf("destroyed Secret: upstream text %q passed unchecked", got)
	}
	unusable := checkfu.Refuse(CodeCredentialUnusable, "edge: cannot be attached")
	if got := withholdErrorEcho(s, testBinding(), unusable); got != unusable {
		t.Errorf("destroyed Secret: refusal rewritten to %v", got)
	}
	if withholdErrorEcho(s, testBinding(), nil) != nil {
		t.Error("nil error rewritten")
	}
}
