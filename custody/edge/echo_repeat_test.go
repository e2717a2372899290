package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
)

// The echo forms of issue 11, finding 11: each is what a provider really
// answered with, and each passed the edge before the decimal byte lists
// and the repeated views. The token holds "/" and "+", as base64 secrets
// do.
const repeatTok = "ghp_tok/en+42=AbC"

func wantEchoed(t *testing.T, what string, body []byte) {
	t.Helper()
	s := custody.NewSecret([]byte(repeatTok))
	defer s.Destroy()
	if err := refuseEcho(s, testBinding(), http.Header{}, body); !errors.Is(err, CodeCredentialEchoed) {
		t.Errorf("%s in the body: %v, want %s", what, err, CodeCredentialEchoed)
	}
	if err := refuseEcho(s, testBinding(), http.Header{"X-Debug": {string(body)}}, nil); !errors.Is(err, CodeCredentialEchoed) {
		t.Errorf("%s in a header: %v, want %s", what, err, CodeCredentialEchoed)
	}
	if err := withholdErrorEcho(s, testBinding(), errors.New("upstream said: "+string(body))); !errors.Is(err, CodeCredentialEchoed) {
		t.Errorf("%s in an error: %v, want %s", what, err, CodeCredentialEchoed)
	}
}

// TestEchoGoByteSlice: Go's %v of a []byte, "[103 104 112 ...]", also
// inside a longer slice ("Bearer " + token).
func TestEchoGoByteSlice(t *testing.T) {
	wantEchoed(t, "%v of the token", fmt.Appendf(nil, `{"debug":"%v"}`, []byte(repeatTok)))
	wantEchoed(t, "%v of the header", fmt.Appendf(nil, "sent %v", []byte("Bearer "+repeatTok)))
}

// TestEchoNodeBuffer: Node's JSON.stringify(Buffer),
// {"type":"Buffer","data":[103,104,...]}, and the ", " list of Python and
// pretty printers.
func TestEchoNodeBuffer(t *testing.T) {
	var data []int
	for _, c := range []byte("Bearer " + repeatTok) {
		data = append(data, int(c))
	}
	b, err := json.Marshal(map[string]any{"type": "Buffer", "data": data})
	if err != nil {
		t.Fatal(err)
	}
	wantEchoed(t, "JSON.stringify(Buffer)", b)
	spaced := strings.ReplaceAll(fmt.Sprint(data), " ", ", ")
	wantEchoed(t, "a comma-and-space list", []byte(spaced))
}

// TestEchoJSONInsideJSON: a JSON document carried as a string inside
// another, where the inner encoder wrote "/" as "\/": the outer escapes
// the backslash again ("\\/", or "\\\/" from an encoder that escapes "/"
// too, as PHP's does), and one JSON-unescape leaves "\/".
func TestEchoJSONInsideJSON(t *testing.T) {
	inner := `{"token":"` + strings.ReplaceAll(repeatTok, "/", `\/`) + `"}`
	outer, err := json.Marshal(map[string]string{"payload": inner})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(outer, []byte(`\\/`)) {
		t.Fatalf("test body %s does not nest the escape", outer)
	}
	wantEchoed(t, "JSON inside JSON", outer)
	wantEchoed(t, "JSON inside JSON, slashes escaped too", bytes.ReplaceAll(outer, []byte("/"), []byte(`\/`)))
	// Three levels deep.
	outer2, _ := json.Marshal(map[string]string{"wrapped": string(outer)})
	wantEchoed(t, "JSON inside JSON inside JSON", outer2)
}

// TestEchoPercentEncodedTwice: a "next" link whose query was
// percent-encoded twice ("%252F"), and percent-encoding of a JSON escape.
func TestEchoPercentEncodedTwice(t *testing.T) {
	twice := url.QueryEscape(url.QueryEscape(repeatTok))
	if !strings.Contains(twice, "%25") {
		t.Fatalf("test form %q is not encoded twice", twice)
	}
	wantEchoed(t, "percent-encoded twice", []byte(`{"next":"https://api.example/x?cursor=`+twice+`"}`))
	wantEchoed(t, "percent-encoded three times", []byte(url.QueryEscape(twice)))
	wantEchoed(t, "a percent-encoded JSON escape", []byte(strings.ReplaceAll(repeatTok, "/", "%5C%2F")))
	wantEchoed(t, "HTML inside percent inside JSON", []byte(strings.ReplaceAll(repeatTok, "+", `%26%2343;`)))
}

// TestEchoRepeatedViewsBounded: the repeated views stop after
// maxViewRounds rounds, so nesting deeper than that is not decoded (and
// costs no more than the bound), while nesting up to it is.
func TestEchoRepeatedViewsBounded(t *testing.T) {
	s := custody.NewSecret([]byte(repeatTok))
	defer s.Destroy()
	nest := func(n int) []byte {
		f := repeatTok
		for range n {
			f = url.QueryEscape(f)
		}
		return []byte(f)
	}
	if err := refuseEcho(s, testBinding(), http.Header{}, nest(maxViewRounds)); !errors.Is(err, CodeCredentialEchoed) {
		t.Errorf("percent-encoded %d times: %v, want %s", maxViewRounds, err, CodeCredentialEchoed)
	}
	if err := refuseEcho(s, testBinding(), http.Header{}, nest(maxViewRounds+1)); err != nil {
		t.Errorf("percent-encoded %d times, beyond the bound: %v, want it passed (the bound is %d)", maxViewRounds+1, err, maxViewRounds)
	}
}

// FuzzDecodeEscapes: one pass never grows the text, reports a change
// exactly when the text changed, and agrees with the single decoders on
// text that holds only their kind of escape.
func FuzzDecodeEscapes(f *testing.F) {
	for _, s := range []string{"", "plain", `a\/b`, `\\\/`, "%252F", "&#43;&amp;#43;", `\u00e9\ud83d\udd11`, "%5C%2F", "&", "%", `\`, "%zz&#;\\q", "&sol;&plus;&DiacriticalGrave;&NewLine;&;&sol&Sol;"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		in := bytes.Clone(s)
		out, changed := decodeEscapes(s)
		if !bytes.Equal(s, in) {
			t.Fatal("decodeEscapes modified its input")
		}
		if len(out) > len(s) {
			t.Fatalf("decodeEscapes(%q) = %q grew", s, out)
		}
		if changed == bytes.Equal(out, s) {
			t.Fatalf("decodeEscapes(%q) = %q, changed %v", s, out, changed)
		}
		switch {
		case bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '&') < 0:
			if want := jsonUnescape(s); !bytes.Equal(out, want) {
				t.Fatalf("decodeEscapes(%q) = %q, jsonUnescape %q", s, out, want)
			}
		case bytes.IndexByte(s, '\\') < 0 && bytes.IndexByte(s, '&') < 0:
			if want := percentDecode(s); !bytes.Equal(out, want) {
				t.Fatalf("decodeEscapes(%q) = %q, percentDecode %q", s, out, want)
			}
		case bytes.IndexByte(s, '\\') < 0 && bytes.IndexByte(s, '%') < 0:
			if want := htmlUnescape(s); !bytes.Equal(out, want) {
				t.Fatalf("decodeEscapes(%q) = %q, htmlUnescape %q", s, out, want)
			}
		}
	})
}
