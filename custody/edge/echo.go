package edge

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/egress"
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
// For a credential that is valid UTF-8, also its UTF-16 encoding in
// either byte order (a provider answering in charset=utf-16).
// And it looks in these views of the body and of every header name and
// value: as sent; with JSON string escapes decoded (a JSON encoder may
// write "/" as "\/" or any character as "\u00XX"); and with that
// percent-decoded too (either hex case), so "tok%2Fen" and "tok\/en" are
// both caught; and with HTML character references decoded in the
// JSON-decoded text ("tok&#43;en"), alone and then percent-decoded.
// And with CR and LF removed from the JSON-decoded text, for base64
// wrapped in lines. Header names, whose case the client canonicalises,
// are searched with ASCII case folded.
func refuseEcho(secret *custody.Secret, b custody.Binding, h http.Header, body []byte) error {
	echoed := false
	err := reveal.With(secret, func(tok []byte) error {
		forms, buf := echoForms(tok)
		defer clear(buf) // forms[0] is tok itself, which reveal clears
		if echoIn(body, forms) {
			echoed = true
			return nil
		}
		// The client canonicalised every header name's case before we
		// see it, so names are searched with ASCII case folded.
		folded, fbuf := foldForms(forms)
		defer clear(fbuf)
		for k, vs := range h {
			name := appendASCIILower(nil, []byte(k))
			if echoIn(name, folded) { // a header name reaches the caller too
				echoed = true
				return nil
			}
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
		return checkfu.Refuse(CodeCredentialEchoed, "edge: the provider's response for %s echoes the credential; it is withheld", b)
	}
	return nil
}

// foldForms returns forms with ASCII letters lowered, all in one buffer
// the caller must clear when done.
func foldForms(forms [][]byte) (folded [][]byte, buf []byte) {
	n := 0
	for _, f := range forms {
		n += len(f)
	}
	buf = make([]byte, 0, n)
	for _, f := range forms {
		start := len(buf)
		buf = appendASCIILower(buf, f)
		folded = append(folded, buf[start:len(buf):len(buf)])
	}
	return folded, buf
}

// appendASCIILower appends s to dst with A-Z lowered; every other byte,
// UTF-8 or not, is kept as is.
func appendASCIILower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// withholdErrorEcho returns err, or, when err's text carries the
// credential in any form refuseEcho looks for (or the credential cannot be
// read to look, for an error carrying network text), err with that text
// withheld. A transport error can quote
// what the provider sent back (a malformed status or header line, an
// HTTP/2 GOAWAY's debug data), and the error reaches the caller like a
// response does. An [*egress.UpstreamError] stays one, with its code and
// target; anything else becomes a Refusal with [CodeCredentialEchoed].
func withholdErrorEcho(secret *custody.Secret, b custody.Binding, err error) error {
	if err == nil {
		return nil
	}
	echoed := false
	rerr := reveal.With(secret, func(tok []byte) error {
		forms, buf := echoForms(tok)
		defer clear(buf)
		echoed = echoIn([]byte(err.Error()), forms)
		return nil
	})
	ue := (*egress.UpstreamError)(nil)
	upstream := errors.As(err, &ue)
	switch {
	case upstream && (echoed || rerr != nil):
		// The text came from the network; unread, it is not passed on.
		return &egress.UpstreamError{Code: ue.Code, Target: ue.Target, Err: errors.New("the provider's failed answer quoted the credential, or could not be checked; its text is withheld")}
	case echoed:
		return checkfu.Refuse(CodeCredentialEchoed, "edge: an error from the exchange for %s quotes the credential; its text is withheld", b)
	}
	// Not echoed; or a refusal this package or egress built, which
	// holds no response text but a withheld Location's.
	return err
}

// echoForms returns tok followed by its encodings that refuseEcho looks
// for, and the one buffer that holds all the encodings, which the caller
// must clear when done.
func echoForms(tok []byte) (forms [][]byte, buf []byte) {
	encs := [...]*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding}
	// scratch holds two zero bytes, then tok: scratch[2-align:] is tok at
	// each alignment after a 3-byte boundary.
	scratch := make([]byte, 2+len(tok)+max(hex.EncodedLen(len(tok)), base64.RawStdEncoding.EncodedLen(2+len(tok))))
	defer clear(scratch)
	in, out := scratch[:2+len(tok)], scratch[2+len(tok):]
	copy(in[2:], tok)
	// UTF-16 takes at most two bytes per byte of UTF-8 (four for a
	// four-byte sequence), in each of two byte orders.
	buf = make([]byte, 0, 2*hex.EncodedLen(len(tok))+len(encs)*3*base64.RawStdEncoding.EncodedLen(len(tok))+2*2*len(tok))
	add := func(f []byte) {
		start := len(buf)
		buf = append(buf, f...)
		forms = append(forms, buf[start:len(buf):len(buf)])
	}
	forms = append(forms, tok)
	n := hex.Encode(out, tok)
	add(out[:n])
	for i, c := range out[:n] {
		if 'a' <= c && c <= 'f' {
			out[i] = c - 'a' + 'A'
		}
	}
	add(out[:n])
	for _, enc := range encs {
		for align := range 3 {
			src := in[2-align:]
			n := enc.EncodedLen(len(src))
			enc.Encode(out[:n], src)
			if first, last := base64Core(align, len(tok)); last > first {
				add(out[first:last])
			}
		}
	}
	if utf8.Valid(tok) {
		for _, bigEndian := range [...]bool{false, true} {
			start := len(buf)
			buf = appendUTF16(buf, tok, bigEndian)
			forms = append(forms, buf[start:len(buf):len(buf)])
		}
	}
	return forms, buf
}

// appendUTF16 appends the UTF-16 encoding of the valid UTF-8 text s to
// dst, in either byte order, without making a string or a rune slice of s
// (neither could be zeroed).
func appendUTF16(dst, s []byte, bigEndian bool) []byte {
	put := func(u uint16) {
		if bigEndian {
			dst = append(dst, byte(u>>8), byte(u))
		} else {
			dst = append(dst, byte(u), byte(u>>8))
		}
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			put(uint16(r1))
			put(uint16(r2))
		} else {
			put(uint16(r))
		}
	}
	return dst
}

// base64Core returns the characters [first, last) of the base64 encoding
// of n bytes that start align bytes (0, 1 or 2) after a 3-byte boundary of
// a longer text and depend on those n bytes alone: the characters before
// first or from last on straddle the bytes before or after them.
func base64Core(align, n int) (first, last int) {
	return (8*align + 5) / 6, 8 * (align + n) / 6
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
	if bytes.ContainsAny(unescaped, "\r\n") {
		// Line-wrapped base64 (MIME, PEM, a file's contents): decoders
		// skip the breaks.
		joined := removeLineBreaks(unescaped)
		defer clear(joined)
		if containsAny(joined, forms) {
			return true
		}
	}
	if bytes.IndexByte(unescaped, '&') >= 0 {
		// HTML: an error page quoting the credential writes "+" as
		// "&#43;" (Go's html/template), "&" as "&amp;".
		h := htmlUnescape(unescaped)
		defer clear(h)
		if containsAny(h, forms) {
			return true
		}
		if bytes.IndexByte(h, '%') >= 0 {
			decoded := percentDecode(h)
			defer clear(decoded)
			if containsAny(decoded, forms) {
				return true
			}
		}
	}
	return false
}

// removeLineBreaks returns a copy of s without its CR and LF bytes.
func removeLineBreaks(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for _, c := range s {
		if c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return out
}

// htmlUnescape returns a copy of s with the HTML character references
// that encoders write decoded: decimal "&#NN;", hexadecimal "&#xHH;" (either
// case) and &amp; &lt; &gt; &quot; &apos;. Anything else, a reference
// without its ";" included, is copied as is; the result is never longer
// than s.
func htmlUnescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '&' {
			if r, n := htmlRef(s[i:]); n > 0 {
				out = utf8.AppendRune(out, r)
				i += n - 1
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}

// htmlRef decodes the character reference at the start of s, which begins
// with '&', and returns its rune and length, or n == 0 when there is none.
func htmlRef(s []byte) (r rune, n int) {
	for _, e := range [...]struct {
		name string
		r    rune
	}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}} {
		if bytes.HasPrefix(s, []byte(e.name)) {
			return e.r, len(e.name)
		}
	}
	if len(s) < 4 || s[1] != '#' {
		return 0, 0
	}
	i, base := 2, rune(10)
	if s[2] == 'x' || s[2] == 'X' {
		i, base = 3, 16
	}
	start := i
	for ; i < len(s) && i-start < 7; i++ {
		d, ok := unhex(s[i])
		if !ok || rune(d) >= base {
			break
		}
		r = r*base + rune(d)
	}
	if i == start || i == len(s) || s[i] != ';' || r == 0 || r > utf8.MaxRune || utf16.IsSurrogate(r) {
		return 0, 0
	}
	return r, i + 1
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
