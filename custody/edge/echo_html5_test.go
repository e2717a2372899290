package edge

import (
	"errors"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// html5Names are the HTML5 named character references of the printable
// ASCII punctuation and of tab and line feed (WHATWG's table), which an
// HTML5 encoder (PHP's htmlentities with ENT_HTML5, say) writes for
// those characters, and every HTML5 decoder reads back.
var html5Names = map[byte][]string{
	'\t': {"Tab"}, '\n': {"NewLine"}, '!': {"excl"}, '"': {"quot", "QUOT"}, '#': {"num"}, '$': {"dollar"}, '%': {"percnt"},
	'&': {"amp", "AMP"}, '\'': {"apos"}, '(': {"lpar"}, ')': {"rpar"}, '*': {"ast", "midast"}, '+': {"plus"}, ',': {"comma"},
	'.': {"period"}, '/': {"sol"}, ':': {"colon"}, ';': {"semi"}, '<': {"lt", "LT"}, '=': {"equals"}, '>': {"gt", "GT"},
	'?': {"quest"}, '@': {"commat"}, '[': {"lsqb", "lbrack"}, '\\': {"bsol"}, ']': {"rsqb", "rbrack"}, '^': {"Hat"},
	'_': {"lowbar", "UnderBar"}, '`': {"grave", "DiacriticalGrave"}, '{': {"lcub", "lbrace"}, '|': {"verbar", "vert", "VerticalLine"},
	'}': {"rcub", "rbrace"},
}

// TestRefuseEchoHTML5Names: an HTML page that quotes the credential
// with its punctuation written as HTML5 named references ("&sol;",
// "&plus;", "&equals;", "&period;", ...) is an echo: any HTML decoder
// reads the credential back. Every name of html5Names, each spelling.
func TestRefuseEchoHTML5Names(t *testing.T) {
	for c, names := range html5Names {
		for _, name := range names {
			ref := "&" + name + ";"
			if got := html.UnescapeString(ref); got != string(c) {
				t.Fatalf("the table is wrong: %s decodes to %q, not %q", ref, got, c)
			}
			tok := "wJalrXUtnFEMI" + string(c) + "K7MDENG" + string(c) + "bPxRfiCY"
			s := custody.NewSecret([]byte(tok))
			page := "<p>Invalid key " + strings.ReplaceAll(tok, string(c), ref) + "</p>"
			if err := refuseEcho(s, testBinding(), http.Header{}, []byte(page)); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("%q as %q: %v, want %s", tok, page, err, CodeCredentialEchoed)
			}
			if err := refuseEcho(s, testBinding(), http.Header{"Link": {"<https://x.example/?k=" + strings.ReplaceAll(tok, string(c), ref) + ">"}}, nil); !errors.Is(err, CodeCredentialEchoed) {
				t.Errorf("%q in a header as %q: %v, want %s", tok, ref, err, CodeCredentialEchoed)
			}
			s.Destroy()
		}
	}
	// A name that is not a reference, or one without its ";", is text.
	s := custody.NewSecret([]byte("abc/def+ghi"))
	defer s.Destroy()
	for _, page := range []string{"abc&Sol;def+ghi", "abc&sol def+ghi", "abc&solidus;def+ghi", "abc&sol;def&plusx;ghi"} {
		if err := refuseEcho(s, testBinding(), http.Header{}, []byte(page)); err != nil {
			t.Errorf("%q refused: %v", page, err)
		}
	}
}
