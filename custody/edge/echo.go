package edge

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
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
// either byte order (a provider answering in charset=utf-16). And its
// bytes as a decimal list separated by " ", "," or ", " (Go's %v of a
// []byte, Node's JSON.stringify(Buffer), Python's list).
// And it looks in these views of the body and of every header name and
// value: as sent; with JSON string escapes decoded (a JSON encoder may
// write "/" as "\/" or any character as "\u00XX"); and with that
// percent-decoded too (either hex case), so "tok%2Fen" and "tok\/en" are
// both caught; and with HTML character references decoded in the
// JSON-decoded text ("tok&#43;en", "tok&plus;en": htmlRef), alone and
// then percent-decoded.
// And with CR and LF removed from the JSON-decoded text, for base64
// wrapped in lines. And, for escapes nested inside escapes (JSON inside
// JSON, "%252F", a percent-encoded JSON or HTML escape), with the JSON,
// percent and HTML escapes decoded together, again and again, until
// nothing changes or maxViewRounds rounds have run (echoInRepeated).
// Header names, whose case the client canonicalises, are searched with
// ASCII case folded.
func refuseEcho(secret *custody.Secret, b custody.Binding, h http.Header, body []byte) error {
	// No view of a text is longer than the text (every decoding shrinks
	// it), and a header name folded keeps its length: a form longer than
	// every text here cannot occur in any, and is not made.
	longest := len(body)
	for k, vs := range h {
		longest = max(longest, len(k))
		for _, v := range vs {
			longest = max(longest, len(v))
		}
	}
	err := reveal.With(secret, func(tok []byte) error {
		return findEcho(tok, longest, h, body)
	})
	if err != nil { // errEchoed, or the credential could not be read
		return checkfu.Refuse(CodeCredentialEchoed, "edge: the provider's response for %s echoes the credential; it is withheld", b)
	}
	return nil
}

// errEchoed is findEcho's answer when it finds a form.
var errEchoed = errors.New("edge: echoed")

// findEcho returns errEchoed when a form of tok at most longest bytes
// long occurs in body or in a name or value of h, and nil otherwise.
// The forms live in a pooled formsBuf, zeroed before it goes back.
func findEcho(tok []byte, longest int, h http.Header, body []byte) error {
	z := sizeEchoForms(tok)
	fb := getFormsBuf(z.size(longest) + z.scratch())
	defer fb.release()
	list, _ := z.build(fb.list[:0], fb.mem, tok, longest)
	if len(list) == 0 {
		return nil // every form is longer than every text
	}
	forms := newEchoSet(list, false)
	forms.plainBelow = plainSearchMax
	defer forms.clear()
	if echoIn(body, forms) {
		return errEchoed
	}
	// The client canonicalised every header name's case before we
	// see it, so names are searched with ASCII case folded. Folding
	// the forms is done only for a name long enough to hold one.
	var folded *echoSet
	for k, vs := range h {
		if len(k) >= forms.short {
			if folded == nil {
				flist, fbuf := foldForms(list)
				defer clear(fbuf)
				folded = newEchoSet(flist, false)
				folded.plainBelow = plainSearchMax
				defer folded.clear()
			}
			name := appendASCIILower(make([]byte, 0, len(k)), []byte(k))
			if echoIn(name, folded) { // a header name reaches the caller too
				return errEchoed
			}
		}
		for _, v := range vs {
			// A value shorter than every form is not copied to be
			// searched.
			if len(v) >= forms.short && echoIn([]byte(v), forms) {
				return errEchoed
			}
		}
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
		set := newEchoSet(forms, false)
		defer set.clear()
		echoed = echoIn([]byte(err.Error()), set)
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

// maxEchoForms is the most forms echoForms makes: the token, two hex
// cases, three alignments of each of two base64 alphabets, two UTF-16
// byte orders and the decimal lists.
const maxEchoForms = 1 + 2 + 3*2 + 2 + len(decimalSeps)

// echoForms returns tok followed by its encodings that refuseEcho looks
// for, and the one buffer that holds all the encodings, which the caller
// must clear when done.
func echoForms(tok []byte) (forms [][]byte, buf []byte) {
	z := sizeEchoForms(tok)
	all := make([]byte, z.size(math.MaxInt)+z.scratch())
	forms, buf = z.build(make([][]byte, 0, maxEchoForms), all, tok, math.MaxInt)
	return forms, buf
}

// echoFormSizes are the lengths of a token's echo forms, known before
// any is made, so that one buffer holds them all and a form longer than
// every text to be searched is not made at all.
type echoFormSizes struct {
	n      int    // the token's length
	b64    [3]int // the base64 core at each alignment (base64Core), either alphabet
	utf16  int    // the UTF-16 form, either byte order; -1 when the token is not valid UTF-8
	digits int    // the decimal digits of the token's bytes
}

// sizeEchoForms returns the lengths of tok's echo forms.
func sizeEchoForms(tok []byte) echoFormSizes {
	z := echoFormSizes{n: len(tok), utf16: -1}
	for align := range z.b64 {
		first, last := base64Core(align, len(tok))
		z.b64[align] = max(0, last-first)
	}
	ascii := true
	for _, c := range tok {
		z.digits += int(decimalBytes[c][0])
		ascii = ascii && c < utf8.RuneSelf
	}
	switch {
	case ascii:
		z.utf16 = 2 * len(tok)
	case utf8.Valid(tok):
		units := 0
		for s := tok; len(s) > 0; {
			r, n := utf8.DecodeRune(s)
			s = s[n:]
			units += utf16.RuneLen(r)
		}
		z.utf16 = 2 * units
	}
	return z
}

// decimalLen returns the length of the decimal list with separator sep.
func (z *echoFormSizes) decimalLen(sep string) int {
	return z.digits + max(0, z.n-1)*len(sep)
}

// size returns the bytes of the forms other than the token that are at
// most limit bytes long.
func (z *echoFormSizes) size(limit int) int {
	n := 0
	add := func(l int) {
		if l <= limit {
			n += l
		}
	}
	add(2 * z.n) // hex, twice
	add(2 * z.n)
	for _, l := range z.b64 { // two alphabets
		if l > 0 {
			add(l)
			add(l)
		}
	}
	if z.utf16 >= 0 {
		add(z.utf16)
		add(z.utf16)
	}
	for _, sep := range decimalSeps {
		add(z.decimalLen(sep))
	}
	return n
}

// scratch returns the bytes build needs besides the forms: two zero
// bytes and the token, then the base64 encoding of both.
func (z *echoFormSizes) scratch() int {
	return 2 + z.n + base64.RawStdEncoding.EncodedLen(2+z.n)
}

// build appends to forms tok and those of its encodings that are at
// most limit bytes long, in the order echoForms gives them. Their bytes
// go in mem, which must hold z.size(limit)+z.scratch() bytes, all zero;
// it returns the forms and the part of mem that holds them, and leaves
// the rest of mem zero. It never allocates a buffer of its own: each
// form is cut from mem with its capacity capped, and the buffer cannot
// grow, so clearing mem clears every form.
func (z *echoFormSizes) build(forms [][]byte, mem, tok []byte, limit int) ([][]byte, []byte) {
	size := z.size(limit)
	buf, scratch := mem[:0:size], mem[size:size+z.scratch()]
	defer clear(scratch)
	cut := func(start int) {
		forms = append(forms, buf[start:len(buf):len(buf)])
	}
	if z.n <= limit {
		forms = append(forms, tok)
	}
	if 2*z.n <= limit {
		start := len(buf)
		buf = buf[:start+2*z.n]
		hex.Encode(buf[start:], tok)
		cut(start)
		start = len(buf)
		buf = append(buf, buf[start-2*z.n:start]...)
		for i, c := range buf[start:] {
			if 'a' <= c && c <= 'f' {
				buf[start+i] = c - 'a' + 'A'
			}
		}
		cut(start)
	}
	// scratch[2-align:] is tok at each alignment after a 3-byte
	// boundary; the URL alphabet's core is the standard one's with "+/"
	// read as "-_".
	in, out := scratch[:2+z.n], scratch[2+z.n:]
	copy(in[2:], tok)
	var std [3][2]int // where each alignment's standard core is in buf
	for align, l := range z.b64 {
		if l == 0 || l > limit {
			continue
		}
		src := in[2-align:]
		enc := out[:base64.RawStdEncoding.EncodedLen(len(src))]
		base64.RawStdEncoding.Encode(enc, src)
		first, last := base64Core(align, z.n)
		start := len(buf)
		buf = append(buf, enc[first:last]...)
		std[align] = [2]int{start, len(buf)}
		cut(start)
	}
	for align, l := range z.b64 {
		if l == 0 || l > limit {
			continue
		}
		start := len(buf)
		buf = append(buf, buf[std[align][0]:std[align][1]]...)
		for i, c := range buf[start:] {
			switch c {
			case '+':
				buf[start+i] = '-'
			case '/':
				buf[start+i] = '_'
			}
		}
		cut(start)
	}
	if z.utf16 >= 0 && z.utf16 <= limit {
		for _, bigEndian := range [...]bool{false, true} {
			start := len(buf)
			buf = appendUTF16(buf, tok, bigEndian)
			cut(start)
		}
	}
	for _, sep := range decimalSeps {
		if z.decimalLen(sep) <= limit {
			start := len(buf)
			buf = appendDecimalList(buf, tok, sep)
			cut(start)
		}
	}
	return forms, buf
}

// A formsBuf holds the forms of one answer's check: their bytes in mem,
// the slices of them in list. It comes from formsBufs; release zeroes
// what was handed out of mem and drops list before it goes back, so a
// pooled formsBuf holds nothing of a credential.
type formsBuf struct {
	list [maxEchoForms][]byte
	buf  []byte // all of it zero but mem, between getFormsBuf and release
	mem  []byte // buf[:n:n], handed out by getFormsBuf
}

// formsBufs keeps formsBufs from one answer to the next: the buffers
// would otherwise be allocated for every answer.
var formsBufs = sync.Pool{New: func() any { return new(formsBuf) }}

// getFormsBuf returns a formsBuf whose mem is n zero bytes.
func getFormsBuf(n int) *formsBuf {
	fb := formsBufs.Get().(*formsBuf)
	if len(fb.buf) < n {
		fb.buf = make([]byte, max(n, minPooledBuf))
	}
	fb.mem = fb.buf[:n:n]
	return fb
}

// release zeroes what fb handed out and its forms, and puts fb back in
// formsBufs, unless its buffer is more than maxPooledBuf bytes.
func (fb *formsBuf) release() {
	clear(fb.mem)
	clear(fb.list[:])
	fb.mem = nil
	if len(fb.buf) > maxPooledBuf {
		return
	}
	formsBufs.Put(fb)
}

// decimalSeps separate the bytes of the decimal byte-list forms: Go's %v
// of a []byte ("[103 104 112]"), Node's JSON.stringify(Buffer)
// ({"type":"Buffer","data":[103,104,112]}), and the ", " of Python's and
// most pretty printers' lists.
var decimalSeps = [...]string{" ", ",", ", "}

// decimalBytes[c] is the length of c in decimal, then its digits.
var decimalBytes = func() (t [256][4]byte) {
	for c := range t {
		d := strconv.AppendUint(nil, uint64(c), 10)
		t[c][0] = byte(len(d))
		copy(t[c][1:], d)
	}
	return t
}()

// appendDecimalList appends the bytes of s to dst as decimal numbers
// separated by sep, without the brackets (the token
// may sit inside a longer list, such as the bytes of "Bearer " + token).
// It writes in place once dst has room, as build gives it.
func appendDecimalList(dst, s []byte, sep string) []byte {
	n := len(sep) * max(0, len(s)-1)
	for _, c := range s {
		n += int(decimalBytes[c][0])
	}
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	j := 0
	for i, c := range s {
		if i > 0 {
			for k := range len(sep) {
				out[j] = sep[k]
				j++
			}
		}
		d := decimalBytes[c]
		switch d[0] {
		case 1:
			out[j] = d[1]
		case 2:
			out[j], out[j+1] = d[1], d[2]
		default:
			out[j], out[j+1], out[j+2] = d[1], d[2], d[3]
		}
		j += int(d[0])
	}
	return dst[:len(dst)+n]
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
		if c := s[0]; c < utf8.RuneSelf {
			put(uint16(c))
			s = s[1:]
			continue
		}
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
func echoIn(s []byte, forms *echoSet) bool {
	// No view is longer than s (every decoding shrinks the text), so a
	// text shorter than every form cannot hold one in any view.
	if len(s) < forms.short {
		return false
	}
	if containsAny(s, forms) {
		return true
	}
	unescaped := s
	if bytes.IndexByte(s, '\\') >= 0 {
		unescaped = appendJSONUnescaped(forms.view(viewJSON, len(s)), s)
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
	if hasLineBreak(unescaped) {
		// Line-wrapped base64 (MIME, PEM, a file's contents): decoders
		// skip the breaks.
		joined := appendLineBreaksRemoved(forms.view(viewJoined, len(unescaped)), unescaped)
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
	return echoInRepeated(s, unescaped, forms)
}

// maxViewRounds bounds echoInRepeated: escapes nested deeper than this
// (JSON inside JSON inside ..., percent-encoded again and again) are not
// decoded further. Every round shrinks the text, so the bound is on work,
// not on termination.
const maxViewRounds = 4

// echoInRepeated reports whether any form occurs in s after its JSON,
// percent and HTML escapes are decoded (all three in one pass, each where
// it occurs), again and again, until nothing changes or maxViewRounds
// rounds have run; and in each round's text with CR and LF removed.
// unescaped is echoIn's JSON view of s: a first round equal to it was
// searched already and is not searched again.
func echoInRepeated(s, unescaped []byte, forms *echoSet) bool {
	cur, owned, first := s, false, 0
	if bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '&') < 0 {
		// With JSON escapes alone, the first round is the JSON view
		// (FuzzDecodeEscapes checks it), which echoIn searched already,
		// with its line-break view.
		if len(unescaped) == len(s) && (len(s) == 0 || &unescaped[0] == &s[0]) {
			return false // no escape at all
		}
		cur, first = unescaped, 1
	}
	defer func() {
		if owned {
			clear(cur)
		}
	}()
	for round := first; round < maxViewRounds; round++ {
		next, changed := decodeEscapes(cur)
		if !changed {
			return false
		}
		if owned {
			clear(cur)
		}
		cur, owned = next, true
		if round == 0 && bytes.Equal(cur, unescaped) {
			continue // echoIn searched this text and its line-break view
		}
		if containsAny(cur, forms) {
			return true
		}
		if hasLineBreak(cur) {
			joined := removeLineBreaks(cur)
			found := containsAny(joined, forms)
			clear(joined)
			if found {
				return true
			}
		}
	}
	return false
}

// hasLineBreak reports whether s holds a CR or an LF (bytes.ContainsAny
// with "\r\n", two vectorised byte searches instead of a set lookup a
// byte).
func hasLineBreak(s []byte) bool {
	return bytes.IndexByte(s, '\n') >= 0 || bytes.IndexByte(s, '\r') >= 0
}

// shortest returns the length of the shortest form.
func shortest(forms [][]byte) int {
	n := len(forms[0])
	for _, f := range forms[1:] {
		n = min(n, len(f))
	}
	return n
}

// decodeEscapes returns s with every JSON string escape, %XX and HTML
// character reference decoded, in one pass that copies the text between
// escapes in bulk, and whether anything was decoded. Escapes that a
// decoding produces are left for the next pass. When nothing is decoded
// it returns s itself. The pass is linear in len(s) (escapeFinder).
func decodeEscapes(s []byte) ([]byte, bool) {
	out, changed, _ := decodeEscapesCounted(s)
	return out, changed
}

// decodeEscapesCounted is decodeEscapes, also returning how many bytes
// its search for escapes read (at most 3*len(s): each escape byte's
// occurrences are searched for once, front to back).
func decodeEscapesCounted(s []byte) ([]byte, bool, int) {
	f := escapeFinder{s: s, next: [3]int{-1, -1, -1}}
	i := f.from(0)
	if i < 0 {
		return s, false, f.scanned
	}
	out := make([]byte, 0, len(s))
	changed := false
	pos := 0
	for i >= 0 {
		out = append(out, s[pos:i]...)
		rest := s[i:]
		n := 0
		switch rest[0] {
		case '\\':
			out, n = jsonEscape(out, rest)
		case '%':
			if len(rest) >= 3 {
				hi, ok1 := unhex(rest[1])
				lo, ok2 := unhex(rest[2])
				if ok1 && ok2 {
					out, n = append(out, hi<<4|lo), 3
				}
			}
		case '&':
			var r rune
			if r, n = htmlRef(rest); n > 0 {
				out = utf8.AppendRune(out, r)
			}
		}
		if n == 0 {
			out, n = append(out, rest[0]), 1
		} else {
			changed = true
		}
		pos = i + n
		i = f.from(pos)
	}
	out = append(out, s[pos:]...)
	if !changed {
		clear(out)
		return s, false, f.scanned
	}
	return out, true, f.scanned
}

// escapeBytes are the bytes an escape decodeEscapes decodes begins with.
var escapeBytes = [3]byte{'\\', '%', '&'}

// An escapeFinder finds the escapes of s front to back. It keeps the
// offset of the next occurrence of each escape byte and searches for a
// byte again only once the position has passed it, so finding every
// escape of s reads s at most once per escape byte. (Searching the whole
// rest of s for each byte at every escape read it once per escape: an
// answer of 8 MiB of "&amp;" took minutes.)
type escapeFinder struct {
	s       []byte
	next    [3]int // offset of the next escapeBytes[k] at or after the last position, len(s) for none, -1 before the first search
	scanned int    // bytes the searches read
}

// from returns the offset of the first escape byte of s at or after pos,
// or -1. Successive calls must not go back.
func (f *escapeFinder) from(pos int) int {
	first := len(f.s)
	for k, c := range escapeBytes {
		if f.next[k] < pos {
			j := bytes.IndexByte(f.s[pos:], c)
			if j < 0 {
				f.scanned += len(f.s) - pos
				f.next[k] = len(f.s)
			} else {
				f.scanned += j + 1
				f.next[k] = pos + j
			}
		}
		first = min(first, f.next[k])
	}
	if first == len(f.s) {
		return -1
	}
	return first
}

// removeLineBreaks returns a copy of s without its CR and LF bytes.
func removeLineBreaks(s []byte) []byte {
	return appendLineBreaksRemoved(make([]byte, 0, len(s)), s)
}

// appendLineBreaksRemoved appends s to out without its CR and LF bytes,
// copying the text between them in bulk.
func appendLineBreaksRemoved(out, s []byte) []byte {
	// cr is the next CR's offset in s, kept across the loop: looking it
	// up again at every LF would scan the rest of s once per line.
	cr := bytes.IndexByte(s, '\r')
	for {
		i := bytes.IndexByte(s, '\n')
		if cr >= 0 && (i < 0 || cr < i) {
			i = cr
		}
		if i < 0 {
			return append(out, s...)
		}
		out = append(out, s[:i]...)
		s = s[i+1:]
		if cr >= 0 {
			if cr -= i + 1; cr < 0 {
				cr = bytes.IndexByte(s, '\r')
			}
		}
	}
}

// htmlUnescape returns a copy of s with the HTML character references
// that encoders write decoded: decimal "&#NN;", hexadecimal "&#xHH;" (either
// case) and the HTML5 names of the printable ASCII punctuation, tab and
// line feed (htmlNames: &amp; &lt; &sol; &plus; &equals; ...). Anything
// else, a reference without its ";" included, is copied as is; the
// result is never longer than s.
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

// htmlNames are the HTML5 named character references (WHATWG's table,
// case-sensitive, with their ";") of the printable ASCII punctuation and
// of tab and line feed: an HTML5 encoder (PHP's htmlentities with
// ENT_HTML5) writes a credential's "/", "+", "=" or "." as "&sol;",
// "&plus;", "&equals;", "&period;", and every HTML decoder reads them
// back. Letters and digits have no names.
var htmlNames = map[string]byte{
	"Tab": '\t', "NewLine": '\n', "excl": '!', "quot": '"', "QUOT": '"', "num": '#', "dollar": '$', "percnt": '%',
	"amp": '&', "AMP": '&', "apos": '\'', "lpar": '(', "rpar": ')', "ast": '*', "midast": '*', "plus": '+', "comma": ',',
	"period": '.', "sol": '/', "colon": ':', "semi": ';', "lt": '<', "LT": '<', "equals": '=', "gt": '>', "GT": '>',
	"quest": '?', "commat": '@', "lsqb": '[', "lbrack": '[', "bsol": '\\', "rsqb": ']', "rbrack": ']', "Hat": '^',
	"lowbar": '_', "UnderBar": '_', "grave": '`', "DiacriticalGrave": '`', "lcub": '{', "lbrace": '{',
	"verbar": '|', "vert": '|', "VerticalLine": '|', "rcub": '}', "rbrace": '}',
}

// maxHTMLName is the length of the longest name in htmlNames.
const maxHTMLName = len("DiacriticalGrave")

// htmlRef decodes the character reference at the start of s, which begins
// with '&', and returns its rune and length, or n == 0 when there is none.
func htmlRef(s []byte) (r rune, n int) {
	if len(s) > 1 && s[1] != '#' {
		// A name: letters up to the ";", looked up once.
		end := bytes.IndexByte(s[1:min(len(s), 2+maxHTMLName)], ';')
		if end <= 0 {
			return 0, 0
		}
		c, ok := htmlNames[string(s[1:1+end])]
		if !ok {
			return 0, 0
		}
		return rune(c), end + 2
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

// jsonUnescape returns a copy of s with every JSON string escape decoded,
// wherever it stands (s need not be valid JSON): \" \\ \/ \b \f \n \r \t
// and \uXXXX, with surrogate pairs joined. Anything else is copied as is.
func jsonUnescape(s []byte) []byte {
	return appendJSONUnescaped(make([]byte, 0, len(s)), s)
}

// appendJSONUnescaped appends s to out with its JSON string escapes
// decoded, as jsonUnescape.
func appendJSONUnescaped(out, s []byte) []byte {
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(out, s...)
		}
		out = append(out, s[:i]...)
		s = s[i:]
		next, n := jsonEscape(out, s)
		if n == 0 {
			next, n = append(out, '\\'), 1
		}
		out, s = next, s[n:]
	}
}

// jsonEscape decodes the JSON string escape at the start of s, which
// begins with '\\', appending it to dst; n is the number of bytes of s it
// consumed, 0 when s does not start with an escape.
func jsonEscape(dst, s []byte) (_ []byte, n int) {
	if len(s) < 2 {
		return dst, 0
	}
	switch e := s[1]; e {
	case '"', '\\', '/':
		return append(dst, e), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return dst, 0
		}
		n = 6
		if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if joined := utf16.DecodeRune(r, r2); joined != utf8.RuneError {
					r, n = joined, 12
				}
			}
		}
		return utf8.AppendRune(dst, r), n
	}
	return dst, 0
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
