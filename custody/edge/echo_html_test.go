package edge

import (
	"bytes"
	"errors"
	htmltemplate "html/template"
	"net/http"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// A provider's HTML error page that quotes the credential escapes some of
// its characters as character references: Go's html/template writes "+"
// as "&#43;", and any HTML encoder writes "&" and "<" as "&amp;" and
// "&lt;". Base64 API keys hold "+", passwords "&". The edge decodes HTML
// character references too before it looks.
func TestRefuseEchoHTML(t *testing.T) {
	for _, tok := range []string{"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "p&ss<w0rd>\"x'"} {
		s := custody.NewSecret([]byte(tok))
		var page bytes.Buffer
		tmpl := htmltemplate.Must(htmltemplate.New("").Parse(`<p>Invalid key {{.}}</p><input value="{{.}}">`))
		if err := tmpl.Execute(&page, tok); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(page.Bytes(), []byte(tok)) {
			t.Fatalf("the page %q quotes %q unescaped; the test proves nothing", page.Bytes(), tok)
		}
		if err := refuseEcho(s, testBinding(), http.Header{}, page.Bytes()); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("%q in %q: %v, want %s", tok, page.Bytes(), err, CodeCredentialEchoed)
		}
		// Spelled as numeric references of either base, in either case.
		var refs []byte
		for i, c := range []byte(tok) {
			switch i % 3 {
			case 0:
				refs = append(refs, "&#"...)
				refs = append(refs, []byte(itoa(int(c)))...)
			case 1:
				refs = append(refs, "&#x"...)
				refs = append(refs, hexByte(c, false)...)
			default:
				refs = append(refs, "&#X"...)
				refs = append(refs, hexByte(c, true)...)
			}
			refs = append(refs, ';')
		}
		if err := refuseEcho(s, testBinding(), http.Header{}, refs); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("%q as %q: %v, want %s", tok, refs, err, CodeCredentialEchoed)
		}
		s.Destroy()
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func hexByte(c byte, upper bool) []byte {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	return []byte{digits[c>>4], digits[c&15]}
}
