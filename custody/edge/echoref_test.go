package edge

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody"
)

// echoFormsRef is echoForms as it was before the forms were sized ahead
// and cut from one buffer: the reference the fast path is held to.
func echoFormsRef(tok []byte) [][]byte {
	encs := [...]*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding}
	in := append([]byte{0, 0}, tok...)
	forms := [][]byte{tok}
	lower := []byte(hex.EncodeToString(tok))
	forms = append(forms, lower, bytes.Map(func(r rune) rune {
		if 'a' <= r && r <= 'f' {
			return r - 'a' + 'A'
		}
		return r
	}, lower))
	for _, enc := range encs {
		for align := range 3 {
			out := []byte(enc.EncodeToString(in[2-align:]))
			if first, last := base64Core(align, len(tok)); last > first {
				forms = append(forms, out[first:last])
			}
		}
	}
	if utf8.Valid(tok) {
		for _, bigEndian := range [...]bool{false, true} {
			var f []byte
			for _, u := range utf16.Encode([]rune(string(tok))) {
				if bigEndian {
					f = append(f, byte(u>>8), byte(u))
				} else {
					f = append(f, byte(u), byte(u>>8))
				}
			}
			forms = append(forms, f)
		}
	}
	for _, sep := range decimalSeps {
		var f []byte
		for i, c := range tok {
			if i > 0 {
				f = append(f, sep...)
			}
			f = fmt.Appendf(f, "%d", c)
		}
		forms = append(forms, f)
	}
	return forms
}

// refuseEchoRef is refuseEcho as it was before the forms longer than
// every text were left out and its buffers pooled: every form made,
// searched in the body, then in every header name (folded) and value.
func refuseEchoRef(tok []byte, h http.Header, body []byte) bool {
	list := echoFormsRef(tok)
	forms := newEchoSet(list, false)
	defer forms.clear()
	if echoIn(body, forms) {
		return true
	}
	folded := newEchoSet(func() [][]byte {
		var f [][]byte
		for _, form := range list {
			f = append(f, bytes.ToLower(form))
		}
		return f
	}(), false)
	defer folded.clear()
	for k, vs := range h {
		if echoIn(bytes.ToLower([]byte(k)), folded) {
			return true
		}
		for _, v := range vs {
			if echoIn([]byte(v), forms) {
				return true
			}
		}
	}
	return false
}

// drawTok draws a credential from pieces that give its forms their
// corners: base64's "+/=", bytes that are not UTF-8, two-, three- and
// four-byte runes, NUL, a line feed, one- two- and three-digit bytes.
func drawTok(t *rapid.T, minLen int) []byte {
	piece := rapid.SampledFrom([]string{"a", "Z", "0", "+", "/", "=", "-", "_", "\xfa", "\xc3", "é", "€", "🔑", "\x00", "\n", "\x09", "c", "\xff"})
	var tok []byte
	for len(tok) < minLen || rapid.IntRange(0, 12).Draw(t, "more") > 0 && len(tok) < 48 {
		tok = append(tok, piece.Draw(t, "piece")...)
	}
	return tok
}

// TestEchoFormsAgreeWithReference: for any token and any limit, the
// forms build makes are the reference's forms at most limit bytes long,
// in the same order; every form but the token lies in the buffer build
// returns, which fills exactly the size computed ahead, and the scratch
// bytes after it are left zero.
func TestEchoFormsAgreeWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := drawTok(t, 0)
		limit := rapid.SampledFrom([]int{math.MaxInt, 0, 1, len(tok), 2 * len(tok), rapid.IntRange(0, 200).Draw(t, "any")}).Draw(t, "limit")
		var want [][]byte
		for _, f := range echoFormsRef(tok) {
			if len(f) <= limit {
				want = append(want, f)
			}
		}
		z := sizeEchoForms(tok)
		mem := make([]byte, z.size(limit)+z.scratch())
		got, buf := z.build(nil, mem, tok, limit)
		if len(got) != len(want) {
			t.Fatalf("token %q, limit %d: %d forms, want %d", tok, limit, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("token %q, limit %d: form %d is %q, want %q", tok, limit, i, got[i], want[i])
			}
		}
		if len(buf) != z.size(limit) || len(buf) > 0 && &buf[0] != &mem[0] {
			t.Fatalf("token %q, limit %d: the forms fill %d bytes of the buffer, want %d", tok, limit, len(buf), z.size(limit))
		}
		clear(buf)
		for i, f := range got {
			if i == 0 && len(tok) <= limit {
				continue // tok itself
			}
			if !bytes.Equal(f, make([]byte, len(f))) {
				t.Fatalf("token %q, limit %d: form %d lies outside the buffer", tok, limit, i)
			}
		}
		if !bytes.Equal(mem, make([]byte, len(mem))) {
			t.Fatalf("token %q, limit %d: the scratch bytes were not cleared", tok, limit)
		}
	})
}

// drawAnswerText draws a text of filler (escape bytes, digits, letters,
// line breaks), whole forms and pieces of forms, some escaped as a
// provider escapes them, often shorter than the longer forms.
func drawAnswerText(t *rapid.T, forms [][]byte, label string) []byte {
	filler := rapid.SampledFrom([]byte("ab0 \\\"%&;#xu\r\n/+=,"))
	var text []byte
	for range rapid.IntRange(0, 6).Draw(t, label+" pieces") {
		f := forms[rapid.IntRange(0, len(forms)-1).Draw(t, label+" form")]
		switch rapid.IntRange(0, 5).Draw(t, label+" kind") {
		case 0:
			text = append(text, rapid.SliceOfN(filler, 0, 24).Draw(t, label+" filler")...)
		case 1:
			text = append(text, f...)
		case 2:
			i := rapid.IntRange(0, len(f)).Draw(t, label+" cut from")
			text = append(text, f[i:rapid.IntRange(i, len(f)).Draw(t, label+" cut to")]...)
		case 3: // JSON-escaped first byte
			if len(f) > 0 {
				text = append(fmt.Appendf(text, `\u%04x`, f[0]), f[1:]...)
			}
		case 4: // percent-encoded, every byte
			for _, c := range f {
				text = fmt.Appendf(text, "%%%02X", c)
			}
		case 5: // HTML reference for the first byte, then a line break in the middle
			if len(f) > 1 {
				mid := rapid.IntRange(1, len(f)).Draw(t, label+" break")
				text = append(append(append(fmt.Appendf(text, "&#%d;", f[0]), f[1:mid]...), "\r\n"...), f[mid:]...)
			}
		}
	}
	return text
}

// TestRefuseEchoAgreesWithReference: refuseEcho, which makes only the
// forms that fit in the longest text and keeps its buffers in pools,
// refuses exactly the answers the reference refuses: bodies and header
// values and names holding forms whole, cut, escaped, wrapped, of any
// length around the forms' own.
func TestRefuseEchoAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := drawTok(t, 1)
		forms := echoFormsRef(tok)
		body := drawAnswerText(t, forms, "body")
		h := http.Header{}
		for i := range rapid.IntRange(0, 3).Draw(t, "headers") {
			name := fmt.Sprintf("X-H%d", i)
			if rapid.IntRange(0, 3).Draw(t, "name is a form") == 0 {
				name = string(forms[rapid.IntRange(0, len(forms)-1).Draw(t, "name form")])
			}
			h[name] = append(h[name], string(drawAnswerText(t, forms, "value")))
		}
		s := custody.NewSecret(bytes.Clone(tok))
		defer s.Destroy()
		got := errors.Is(refuseEcho(s, testBinding(), h, body), CodeCredentialEchoed)
		if want := refuseEchoRef(tok, h, body); got != want {
			t.Fatalf("token %q: refuseEcho says echoed %v, the reference %v, for header %q and body %q", tok, got, want, h, body)
		}
	})
}

// TestRefuseEchoFormAsLongAsTheText: a form exactly as long as the
// longest text (the body, a header value, a header name) is made and
// found: the forms left out are only those longer than every text.
func TestRefuseEchoFormAsLongAsTheText(t *testing.T) {
	for _, tok := range []string{"tok+/en?\xfa", "ghp_EDGECANARY0123456789abcdefXYZ", "k", "\u00e9\u20ac\U0001F511"} {
		s := custody.NewSecret([]byte(tok))
		for i, f := range echoFormsRef([]byte(tok)) {
			for where, c := range map[string]struct {
				h    http.Header
				body []byte
			}{
				"body":         {http.Header{"X-A": {"#"}}, bytes.Clone(f)},
				"header value": {http.Header{"X-A": {string(f)}}, nil},
			} {
				if err := refuseEcho(s, testBinding(), c.h, c.body); !errors.Is(err, CodeCredentialEchoed) {
					t.Errorf("token %q, form %d as the whole %s: %v, want %s", tok, i, where, err, CodeCredentialEchoed)
				}
			}
		}
		lower := hex.EncodeToString([]byte(tok))
		if err := refuseEcho(s, testBinding(), http.Header{lower: {""}}, nil); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("token %q, hex form as the whole header name: %v, want %s", tok, err, CodeCredentialEchoed)
		}
		if shortest(echoFormsRef([]byte(tok))) > len("X-A") {
			if err := refuseEcho(s, testBinding(), http.Header{"X-A": {"#"}}, []byte("{}")); err != nil {
				t.Errorf("token %q: an answer shorter than every form refused: %v", tok, err)
			}
		}
		s.Destroy()
	}
}

// TestRefuseEchoEmptyCredential: an empty credential occurs in every
// text, as bytes.Contains has it; the answer is refused, and the check
// does not panic.
func TestRefuseEchoEmptyCredential(t *testing.T) {
	s := custody.NewSecret(nil)
	defer s.Destroy()
	for _, body := range [][]byte{nil, []byte("hello")} {
		if err := refuseEcho(s, testBinding(), http.Header{"X-A": {"a"}}, body); !errors.Is(err, CodeCredentialEchoed) {
			t.Errorf("empty credential, body %q: %v, want %s", body, err, CodeCredentialEchoed)
		}
	}
	if err := withholdErrorEcho(s, testBinding(), errors.New("upstream said no")); !errors.Is(err, CodeCredentialEchoed) {
		t.Errorf("empty credential, an error: %v, want %s", err, CodeCredentialEchoed)
	}
}

// TestPutZeroedClearsWholeBuffer: a buffer from getZeroed is all zero
// and at least as long as asked, and putZeroed zeroes every byte of it,
// pooled or not, however much was written.
func TestPutZeroedClearsWholeBuffer(t *testing.T) {
	for _, n := range []int{0, 1, 1000, minPooledBuf, minPooledBuf + 1, maxPooledBuf, maxPooledBuf + 1} {
		for range 3 { // the second and third come from the pool
			p := getZeroed(n)
			b := *p
			if len(b) < n || !bytes.Equal(b, make([]byte, len(b))) {
				t.Fatalf("getZeroed(%d): %d bytes, not all zero", n, len(b))
			}
			for i := range b {
				b[i] = 0xa5
			}
			*p = b[:n/2]
			putZeroed(p)
			if !bytes.Equal(b, make([]byte, len(b))) {
				t.Fatalf("putZeroed left bytes in a buffer of %d", len(b))
			}
		}
	}
}

// TestFormsBufReleaseZeroes: release zeroes every byte a formsBuf
// handed out and drops its forms, before it goes back to its pool.
func TestFormsBufReleaseZeroes(t *testing.T) {
	tok := []byte("ghp_EDGECANARY0123456789abcdefXYZ")
	for _, limit := range []int{math.MaxInt, 40, 0} {
		z := sizeEchoForms(tok)
		fb := getFormsBuf(z.size(limit) + z.scratch())
		if !bytes.Equal(fb.buf, make([]byte, len(fb.buf))) {
			t.Fatal("getFormsBuf handed out bytes that are not zero")
		}
		forms, _ := z.build(fb.list[:0], fb.mem, tok, limit)
		buf := fb.buf
		fb.release()
		if !bytes.Equal(buf, make([]byte, len(buf))) {
			t.Fatalf("limit %d: release left bytes of the %d forms", limit, len(forms))
		}
		for i, f := range fb.list {
			if f != nil {
				t.Fatalf("limit %d: release kept form %d", limit, i)
			}
		}
	}
}

// TestRefuseEchoLeavesPoolsZero: after refuseEcho has checked answers
// that echo the credential, in the body and in escaped views, what its
// pools hold is all zero.
func TestRefuseEchoLeavesPoolsZero(t *testing.T) {
	tok := "ghp_EDGECANARY0123456789abcdefXYZ"
	s := custody.NewSecret([]byte(tok))
	defer s.Destroy()
	for _, body := range []string{
		`{"t":"` + tok + `"}`,
		`{"t":"\u0067` + tok[1:] + `"}` + "\r\n" + strings.Repeat("x", 3000),
		strings.Repeat(`{"ok":"\/"}`+"\n", 500) + tok,
		strings.Repeat(`{"ok":"\/"}`+"\n", 500),
	} {
		_ = refuseEcho(s, testBinding(), http.Header{}, []byte(body))
	}
	for range 8 {
		fb := formsBufs.Get().(*formsBuf)
		if !bytes.Equal(fb.buf, make([]byte, len(fb.buf))) {
			t.Fatal("a pooled formsBuf holds bytes")
		}
		for _, f := range fb.list {
			if f != nil {
				t.Fatal("a pooled formsBuf holds forms")
			}
		}
	}
	for k := range zeroPools {
		for range 8 {
			p, ok := zeroPools[k].Get().(*[]byte)
			if !ok {
				break
			}
			if b := *p; !bytes.Equal(b[:cap(b)], make([]byte, cap(b))) {
				t.Fatalf("pool %d holds a buffer with bytes in it", k)
			}
		}
	}
}
