package edge

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/checkfu/checkfu/custody"
)

func TestRefuseEchoForms(t *testing.T) {
	tok := []byte("tok+/en?\xfa") // 9 bytes: base64 without padding; 10 below needs it
	for _, tok := range [][]byte{tok, append(tok, '!')} {
		s := custody.NewSecret(bytes.Clone(tok))
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
		// A credential that cannot be read cannot be looked for: the
		// response is withheld, never passed unchecked.
		if err := refuseEcho(s, testBinding(), http.Header{"X-Ok": {"fine"}}, []byte(`{"ok":true}`)); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("len %d, destroyed Secret: %v, want %s", len(tok), err, CodeCredentialEchoed)
		}
	}
}

// TestRefuseEchoViews checks the echoes a real provider produces beyond the
// plain forms: JSON escapes of the token's characters, percent-encoding
// in either hex case, the token inside a longer base64 text at each
// alignment, and combinations. The token holds "/", "+" and a non-ASCII
// byte sequence, as base64 secrets and AWS keys do.
//
// Mutants: skipping the JSON-unescaped view, the percent-decoded view,
// the header names, or any alignment in echoForms, or getting base64Core's first or last
// character wrong (one character too many takes in a neighbour's bits),
// makes this fail.
func TestRefuseEchoViews(t *testing.T) {
	tok := []byte("ab/cd+ef\u00e9gh12")
	s := custody.NewSecret(bytes.Clone(tok))
	defer s.Destroy()
	b64 := func(enc *base64.Encoding, prefix string) string {
		return enc.EncodeToString(append([]byte(prefix), tok...))
	}
	echoes := map[string]struct {
		header http.Header
		body   string
	}{
		`JSON \/`:                 {body: `{"auth":"Bearer ab\/cd+ef\u00e9gh12"}`},
		`JSON \u escapes`:         {body: `{"auth":"ab\u002fcd\u002bef\u00e9gh12"}`},
		`JSON surrogate-free`:     {body: `["ab/cd+ef\u00E9gh12"]`},
		"percent upper":           {body: `see /login?token=ab%2Fcd%2Bef%C3%A9gh12&x=1`},
		"percent lower":           {body: `see /login?token=ab%2fcd%2bef%c3%a9gh12`},
		"percent in a header":     {header: http.Header{"Location": {"https://x.example/cb?t=ab%2Fcd%2Bef%C3%A9gh12"}}},
		"hex in a header name":    {header: http.Header{"X-" + hex.EncodeToString(tok): {"1"}}},
		`percent inside JSON`:     {body: `{"next":"https:\/\/x.example\/?t=ab%2Fcd%2Bef%C3%A9gh12"}`},
		"base64 align 0 in a run": {body: "xyz" + b64(base64.StdEncoding, "abc")},
		"base64 align 1":          {body: b64(base64.StdEncoding, "u")},
		"base64 align 2":          {body: b64(base64.StdEncoding, "u:")},
		"base64 of Bearer tok":    {header: http.Header{"X-Echo": {b64(base64.StdEncoding, "Bearer ")}}},
		"base64url align 1":       {body: b64(base64.RawURLEncoding, "u")},
		"base64url align 2":       {body: b64(base64.RawURLEncoding, "u:")},
	}
	for name, e := range echoes {
		h := e.header
		if h == nil {
			h = http.Header{}
		}
		if err := refuseEcho(s, testBinding(), h, []byte(e.body)); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("%s: %v, want %s", name, err, CodeCredentialEchoed)
		}
	}
	clean := []string{
		`{"auth":"ab\/cd+ef\u00e9gh1"}`, // one character short
		`see ?token=ab%2Fcd%2Bef%C3%A9gh13`,
		`%zz \u12 \`, // malformed escapes are copied, not decoded into a match
		b64(base64.StdEncoding, "")[:8],
	}
	for _, body := range clean {
		if err := refuseEcho(s, testBinding(), http.Header{}, []byte(body)); err != nil {
			t.Errorf("clean body %q refused: %v", body, err)
		}
	}
}

// TestBase64CoreIsExact checks base64Core against brute force: for every
// alignment and several neighbours, the core occurs in the encoding of
// neighbour+tok+neighbour, and it is the longest such run (one character
// more on either side would depend on a neighbour's bits).
func TestBase64CoreIsExact(t *testing.T) {
	tok := []byte{0xfb, 0xff, 0x00, 0x7e, 0x81, 0x3c, 0xc3}
	for align := range 3 {
		first, last := base64Core(align, len(tok))
		core := base64.RawStdEncoding.EncodeToString(append(make([]byte, align), tok...))[first:last]
		if core == "" {
			t.Fatalf("align %d: empty core", align)
		}
		for _, fill := range []byte{0x00, 0xff, 0x55} {
			for after := range 3 {
				in := append(append(bytes.Repeat([]byte{fill}, 3+align), tok...), bytes.Repeat([]byte{fill}, after)...)
				enc := base64.RawStdEncoding.EncodeToString(in)
				if !strings.Contains(enc, core) {
					t.Errorf("align %d fill %#x after %d: core %q not in %q", align, fill, after, core, enc)
				}
			}
		}
		// Longest: the characters just outside the core change with the
		// neighbours, so a wider window would miss some echo.
		first = (8*(3+align) + 5) / 6
		encA := base64.RawStdEncoding.EncodeToString(append(append(bytes.Repeat([]byte{0x00}, 3+align), tok...), 0x00, 0x00, 0x00))
		encB := base64.RawStdEncoding.EncodeToString(append(append(bytes.Repeat([]byte{0xff}, 3+align), tok...), 0xff, 0xff, 0xff))
		if encA[first:first+len(core)] != core || encB[first:first+len(core)] != core {
			t.Errorf("align %d: core %q is not where it should be", align, core)
		}
		last = first + len(core)
		if align != 0 && encA[first-1] == encB[first-1] {
			t.Errorf("align %d: the character before the core does not depend on the neighbour; the core could be longer", align)
		}
		if encA[last] == encB[last] {
			t.Errorf("align %d: the character after the core does not depend on the neighbour; the core could be longer", align)
		}
	}
}

func TestJSONUnescapeAndPercentDecode(t *testing.T) {
	for in, want := range map[string]string{
		`a\/b\\c\"d\n\t`:     "a/b\\c\"d\n\t",
		`\u0041\u00e9\u20AC`: "A\u00e9\u20ac",
		`\ud83d\ude00`:       "\U0001F600",
		`\ud83d x`:           "\ufffd x", // a lone surrogate decodes to U+FFFD, like encoding/json
		`\u12`:               `\u12`,
		`tail\`:              `tail\`,
		`\q`:                 `\q`,
	} {
		if got := string(jsonUnescape([]byte(in))); got != want {
			t.Errorf("jsonUnescape(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"a%2Fb%2fc": "a/b/c",
		"tok%2F":    "tok/", // an escape that ends the text is decoded too
		"%zz%2":     "%zz%2",
		"100%":      "100%",
		"a+b%20c":   "a+b c",
	} {
		if got := string(percentDecode([]byte(in))); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzEchoViews checks the decoders behind the echo views on any input:
// they never panic, never lengthen the text, and change nothing when
// there is nothing to decode; and a token placed in any view of any text
// is found.
func FuzzEchoViews(f *testing.F) {
	f.Add([]byte(`{"a":"b\/c\u00e9\ud83d\ude00"}`), []byte("tok/en"), uint8(0))
	f.Add([]byte(`?t=a%2Fb%2fc%zz%`), []byte("a/b"), uint8(1))
	f.Add([]byte(`\`), []byte("x\x00y"), uint8(2))
	f.Fuzz(func(t *testing.T, text, tok []byte, how uint8) {
		u := jsonUnescape(text)
		p := percentDecode(text)
		if len(u) > len(text) || len(p) > len(text) {
			t.Fatalf("a decoder lengthened %q: %q, %q", text, u, p)
		}
		if !bytes.ContainsRune(text, '\\') && !bytes.Equal(u, text) {
			t.Fatalf("jsonUnescape changed %q without a backslash: %q", text, u)
		}
		if !bytes.ContainsRune(text, '%') && !bytes.Equal(p, text) {
			t.Fatalf("percentDecode changed %q without a percent sign: %q", text, p)
		}
		if h := htmlUnescape(text); len(h) > len(text) || !bytes.ContainsRune(text, '&') && !bytes.Equal(h, text) {
			t.Fatalf("htmlUnescape lengthened %q, or changed it without an ampersand: %q", text, h)
		}
		if len(tok) < 4 {
			return
		}
		forms, buf := echoForms(tok)
		defer clear(buf)
		var placed []byte
		switch how % 5 {
		case 0: // raw
			placed = tok
		case 1: // percent-encoded, every byte
			for _, c := range tok {
				placed = fmt.Appendf(placed, "%%%02X", c)
			}
		case 2: // base64 at a fuzzed alignment
			placed = []byte(base64.StdEncoding.EncodeToString(append(bytes.Repeat([]byte{'u'}, int(how/4%3)), tok...)))
		case 3: // hex
			placed = []byte(hex.EncodeToString(tok))
		case 4: // HTML decimal character references, every byte
			if !utf8.Valid(tok) || bytes.ContainsRune(tok, 0) || bytes.ContainsRune(tok, utf8.RuneError) {
				return // a reference names a character, not a byte
			}
			for _, r := range string(tok) {
				placed = fmt.Appendf(placed, "&#%d;", r)
			}
		}
		body := append(append(bytes.Clone(text), placed...), text...)
		for _, filtered := range []bool{false, true} {
			set := newEchoSet(forms, filtered)
			found := echoIn(body, set)
			set.clear()
			if !found {
				t.Fatalf("token %q placed as %q in %q not found (filtered %v)", tok, placed, body, filtered)
			}
		}
	})
}

// TestEchoFormsClearedWithBuf: clearing the buffer echoForms returns
// clears every encoding of the token; none lives in an array that the
// buffer outgrew, where nothing would zero it.
func TestEchoFormsClearedWithBuf(t *testing.T) {
	for n := 1; n <= 40; n++ {
		tok := bytes.Repeat([]byte{0xa5}, n)
		forms, buf := echoForms(tok)
		clear(buf)
		for i, f := range forms[1:] {
			if len(f) == 0 || !bytes.Equal(f, make([]byte, len(f))) {
				t.Fatalf("token of %d bytes: form %d is %q after clearing the buffer", n, i+1, f)
			}
		}
	}
}
