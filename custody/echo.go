package custody

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// refuseEcho withholds a provider response whose headers or body carry the
// credential. The response goes to the caller, and through it possibly to
// the agent, so this is the last line between a provider that echoes what
// it was sent (an echo endpoint, an error quoting the Authorization
// header, a "next" link with the token in its query) and a disclosed
// secret.
//
// It looks for the credential in these forms (echoForms): raw; hex, lower
// and upper case; base64, standard and URL alphabet, at each of the three
// alignments a token can have inside a longer base64 text (such as
// base64("user:" + token) or base64("Bearer " + token)), padded or not.
// And it looks in three views of the body and of every header value: as
// sent; with JSON string escapes decoded (a JSON encoder may write "/" as
// "\/" or any character as "\u00XX"); and with that percent-decoded too
// (either hex case), so "tok%2Fen" and "tok\/en" are both caught.
func refuseEcho(secret *Secret, b Binding, h http.Header, body []byte) error {
	echoed := false
	err := secret.reveal(func(tok []byte) error {
		forms := echoForms(tok)
		defer func() {
			for _, f := range forms[1:] { // forms[0] is tok, which reveal clears
				clear(f)
			}
		}()
		if echoIn(body, forms) {
			echoed = true
			return nil
		}
		for _, vs := range h {
			for _, v := range vs {
				if echoIn([]byte(v), forms) {
					echoed = true
					return nil
				}
			}
		}
		return nil
	})
	if err != nil || echoed {
		return checkfu.Refuse(CodeCredentialEchoed, "custody: the provider's response for %s echoes the credential; it is withheld", b)
	}
	return nil
}

// echoForms returns tok followed by its encodings that refuseEcho looks
// for. Every returned slice but the first is a fresh copy the caller must
// clear.
func echoForms(tok []byte) [][]byte {
	lower := []byte(hex.EncodeToString(tok))
	forms := [][]byte{tok, lower, bytes.ToUpper(lower)}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for align := range 3 {
			if core := base64Core(enc, tok, align); len(core) > 0 {
				forms = append(forms, core)
			}
		}
	}
	return forms
}

// base64Core returns the characters of the base64 encoding of tok that
// depend on tok alone when tok starts align bytes (0, 1 or 2) after a
// 3-byte boundary of a longer encoded text: the characters that straddle
// the bytes before or after tok are left out.
func base64Core(enc *base64.Encoding, tok []byte, align int) []byte {
	in := make([]byte, align+len(tok))
	copy(in[align:], tok)
	out := make([]byte, enc.EncodedLen(len(in)))
	enc.Encode(out, in)
	clear(in)
	first := (8*align + 5) / 6         // first character with no bit of the bytes before
	last := 8 * (align + len(tok)) / 6 // characters [first, last) hold bits of tok only
	if last <= first {
		clear(out)
		return nil
	}
	core := append([]byte(nil), out[first:last]...)
	clear(out)
	return core
}

// echoIn reports whether any form occurs in s as sent, in s with JSON
// string escapes decoded, or in that decoded text percent-decoded.
func echoIn(s []byte, forms [][]byte) bool {
	if containsAny(s, forms) {
		return true
	}
	unescaped := s
	if bytes.IndexByte(s, '\\') >= 0 {
		unescaped = jsonUnescape(s)
		defer clear(unescaped)
		if containsAny(unescaped, forms) {
			return true
		}
	}
	if bytes.IndexByte(unescaped, '%') >= 0 {
		decoded := percentDecode(unescaped)
		defer clear(decoded)
		if containsAny(decoded, forms) {
			return true
		}
	}
	return false
}

func containsAny(s []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(s, f) {
			return true
		}
	}
	return false
}

// jsonUnescape returns a copy of s with every JSON string escape decoded,
// wherever it stands (s need not be valid JSON): \" \\ \/ \b \f \n \r \t
// and \uXXXX, with surrogate pairs joined. Anything else is copied as is.
func jsonUnescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
			i++
		case 'b':
			out, i = append(out, '\b'), i+1
		case 'f':
			out, i = append(out, '\f'), i+1
		case 'n':
			out, i = append(out, '\n'), i+1
		case 'r':
			out, i = append(out, '\r'), i+1
		case 't':
			out, i = append(out, '\t'), i+1
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				out = append(out, c)
				continue
			}
			i += 5
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s[i+3:]); ok {
					if joined := utf16.DecodeRune(r, r2); joined != utf8.RuneError {
						r = joined
						i += 6
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, c)
		}
	}
	return out
}

// hex4 decodes the four hex digits at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// percentDecode returns a copy of s with every %XX (either hex case)
// decoded. A '%' not followed by two hex digits is copied as is; '+' is
// left alone (a credential is as likely to hold a '+' as a space).
func percentDecode(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				out = append(out, hi<<4|lo)
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
