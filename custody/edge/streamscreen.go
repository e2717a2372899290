package edge

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// A streamScreen is a stream's echo screen ([Stream.Screen]): it is
// given the answer's bytes in order, a piece at a time (the model route
// hands it whole server-sent events, a batch at a time), and reports a
// form of the credential (echoIn, in every view echoIn reads) as soon as
// the piece that completes it arrives, even when the form began in an
// earlier piece. It carries two things from one piece to the next:
//
//   - the raw text's tail: the last carry bytes of the pieces so far.
//     The seam, that tail followed by the first carry bytes of the new
//     piece, is searched (besides the piece itself), so a form split
//     across two pieces is found wherever its bytes, escaped as a view
//     decodes them, span at most carry bytes;
//   - the text an agent assembles: the data lines' JSON string values,
//     as sent (echoIn decodes their escapes in its views), appended in
//     order to a channel per member name (a model's
//     text deltas under "text", "delta", "partial_json", "content",
//     "arguments" ...), as an agent concatenates the deltas of one
//     field. Each channel's tail (carry bytes) followed by what the new
//     piece added to it is searched, so a form split across two events,
//     or two string values of one event, is found when its last part
//     arrives.
//
// carry is carryFactor times the longest form (for a 108-byte key,
// whose longest form is a decimal byte list of about 540 bytes, 3.2
// KiB). At most maxTextChannels names get a channel of their own; the
// values of any further name share one more channel. Lines end where an
// agent's event-stream parser ends them (a lone CR, a LF, or CRLF, a
// byte order mark at the stream's start dropped), and an event's data
// lines, which the parser joins with a newline (JSON white space), are
// read as one value: the member name in effect where one ends, or its
// last string when the next starts with ':', names the next one's
// values. A data line is read as it lies in its piece: a line split
// across two pieces (the model route never splits one) is read as two
// lines, and only the raw seam covers it.
//
// It also says what to hold back (hold): once a piece passes, when the
// raw tail or a channel's text ends with a prefix of a form at least
// MinHeldPrefix bytes long, as sent (heldPrefix), the events from the
// one where that prefix begins are not to be written until a later
// piece shows whether the form completes. Only the text as sent is
// tested there: a prefix written with escapes is caught when the form
// completes, but not held. It is not safe for concurrent use, and its
// tails and channels hold the answer's text (possibly pieces of the
// credential): clear zeroes them.
type streamScreen struct {
	forms *echoSet
	carry int
	// held are the forms longer than MinHeldPrefix, whose prefixes are
	// held back; long is the longest form's length.
	held [][]byte
	long int
	// total is the bytes screened so far, released the offset in them
	// up to which hold let them be written (an event's start), evs the
	// starts of the events after released, and ev the start of the
	// event the line being read is in.
	total, released, ev int64
	evs                 []int64
	tail                []byte // the raw text's last carry bytes so far
	seam                []byte // tail + the new piece's head, rebuilt for each piece
	// channels are the assembled text's channels, in the order their
	// names were first seen; the last may be the shared one.
	channels []textChannel
	shared   bool // channels' last is the shared one
	// prev is the last data line's value read in full (at most
	// maxCachedLine bytes), and marks the strings it held, in order: a
	// line that starts as prev does is read from where they part, the
	// values before replayed from marks (reading is a function of the
	// bytes, left to right, so a common prefix reads the same).
	prev  []byte
	marks []mark
	// name is the member name in effect at the end of the last data
	// line read, which the next data line of the same event starts
	// with (an agent joins an event's data lines with a newline, JSON
	// white space, so a name and its value may lie on two lines);
	// pending is that line's last string when nothing but white space
	// followed it, the name if the next data line starts with ':';
	// prevName is the name prev was read with. An event's end resets
	// name and pending. cr says the last piece ended with a carriage
	// return, whose newline the next piece may start with.
	name, pending, prevName []byte
	cr                      bool
}

// A textChannel is the text assembled from the string values of one
// member name: tail is its last carry bytes so far, added what the piece
// being searched added to it.
type textChannel struct {
	name  []byte
	tail  []byte
	added int // the bytes the current piece added at tail's end
	// n is the bytes added in all; segs say which event added the last
	// long of them (a seg ends at the channel's offset end); open is
	// the start of the event where a prefix held back begins, or -1.
	n    int64
	segs []seg
	lo   int // segs[lo:] are the ones kept
	open int64
}

// A seg is a run of a channel's text that one event (starting at the
// stream offset ev) added, ending at the channel's offset end.
type seg struct{ end, ev int64 }

// MinHeldPrefix is the shortest prefix of a form of the credential the
// stream's screen holds back ([Stream.Screen]): 8 bytes. A form split
// across two pieces of the stream at an offset of 8 or more reaches the
// reader not at all (it is held until the piece that completes it is
// refused); split before, at most its first 7 bytes do, as the text
// around a key often repeats a prefix that short ("sk-ant-" is 7) and
// holding every 1-byte prefix would hold most events. 7 bytes of a key
// of 32 random bytes or more leave the rest to guess.
const MinHeldPrefix = 8

// carryFactor is how many times its longest form's length the screen
// carries from one piece to the next: six, the width of "\u00XX", the
// widest escape a JSON encoder writes for one byte. A form whose escaped
// bytes span more than that across a piece boundary (escapes nested in
// escapes, or HTML references of seven digits) is found only within
// one piece.
const carryFactor = 6

// maxTextChannels bounds the member names that get a channel of their
// own: 16, more than any dialect's events use (Anthropic's delta events
// name type, index, delta, text; a Responses delta eight). The values of
// every further name share one more channel, where they interleave.
const maxTextChannels = 16

// maxCachedLine is the longest data line kept, with its strings'
// marks, to read the next one from where they part: 4 KiB, more than a
// delta event's line. A longer line is read whole, and so is the next.
const maxCachedLine = 4 << 10

// A mark is one string of a data line: a member name (ch < 0) or a value
// added to channel ch, at line[start:end], the closing quote at end (for
// a string the line's end cut short, end is the line's length), and
// next the first byte after it that is not white space, which told a
// name (':') from a value (or the line's length).
type mark struct {
	start, end, next, ch int
}

// newStreamScreen returns the screen of forms (not empty); clear stops
// it.
func newStreamScreen(forms [][]byte) *streamScreen {
	long := 0
	var held [][]byte
	for _, f := range forms {
		long = max(long, len(f))
		if len(f) > MinHeldPrefix {
			held = append(held, f)
		}
	}
	return &streamScreen{forms: newEchoSet(forms, true), carry: carryFactor * long, held: held, long: long}
}

// screen reports whether a form of the credential occurs in p, across
// the seam between the pieces before and p, or in a text channel once
// p's string values are added to it.
func (s *streamScreen) screen(p []byte) bool {
	raw := s.screenRaw(p)
	found := s.screenText(p) || raw
	s.total += int64(len(p))
	return found
}

// hold returns how many of the bytes screened so far, at their end, are
// not to be written yet, once the last piece has passed: none, or those
// from the start of the event where a held prefix (heldPrefix) of the
// raw tail or of a channel's text begins. It never holds what it let be
// written before: a prefix that grew past MinHeldPrefix in this piece
// is held from this piece's bytes on.
func (s *streamScreen) hold() int64 {
	from := s.total
	if n := s.heldPrefix(s.tail); n > 0 {
		from = s.eventAt(s.total - int64(n))
	}
	for i := range s.channels {
		if o := s.channels[i].open; o >= 0 {
			from = min(from, o)
		}
	}
	from = max(from, s.released)
	s.released = from
	// The event starts kept: those after released, and of those only
	// the last at or before where a raw prefix could begin, and after.
	k := 0
	for k < len(s.evs) && (s.evs[k] <= from || k+1 < len(s.evs) && s.evs[k+1] <= s.total-int64(s.long)) {
		k++
	}
	s.evs = s.evs[:copy(s.evs, s.evs[k:])]
	return s.total - from
}

// eventAt returns the start of the event, not yet released, that holds
// the stream offset x; released when x is before every event start
// kept.
func (s *streamScreen) eventAt(x int64) int64 {
	at := s.released
	for _, e := range s.evs {
		if e > x {
			break
		}
		at = e
	}
	return at
}

// heldPrefix returns the length of the longest prefix of a form, of at
// least MinHeldPrefix bytes and shorter than the form, that t ends with;
// 0 if there is none. It searches the last len(form)-1 bytes of t for
// the form's first MinHeldPrefix bytes and checks that what follows
// each place found continues the form to t's end: outside a key such
// places are rare, so this costs one short search per form.
func (s *streamScreen) heldPrefix(t []byte) int {
	best := 0
	for _, f := range s.held {
		w := t[max(0, len(t)-(len(f)-1)):]
		head := f[:MinHeldPrefix]
		for i := 0; len(w)-i > best; i++ {
			j := bytes.Index(w[i:], head)
			if j < 0 {
				break
			}
			i += j
			if len(w)-i > best && bytes.HasPrefix(f, w[i:]) {
				best = len(w) - i
				break
			}
		}
	}
	return best
}

// screenRaw reports whether a form occurs in p, or across the seam
// between the pieces before and p; it keeps p's tail.
func (s *streamScreen) screenRaw(p []byte) bool {
	found := echoIn(p, s.forms)
	if !found && len(s.tail) > 0 {
		s.seam = append(append(s.seam[:0], s.tail...), p[:min(len(p), s.carry)]...)
		found = echoIn(s.seam, s.forms)
		clear(s.seam)
	}
	s.tail = keepTail(s.tail, p, s.carry)
	return found
}

// screenText adds p's string values to their channels and reports
// whether a form occurs in a channel p added to.
func (s *streamScreen) screenText(p []byte) bool {
	s.addValues(p)
	// Only a text the piece added to is searched: a form found there
	// ends in what it added.
	found := false
	for i := range s.channels {
		c := &s.channels[i]
		if c.added == 0 {
			continue
		}
		found = found || echoIn(c.tail, s.forms)
		c.open = -1
		if n := s.heldPrefix(c.tail); n > 0 {
			c.open = c.eventAt(c.n - int64(n))
		}
		c.added = 0
		c.tail = trimTail(c.tail, s.carry)
	}
	return found
}

// keepTail returns tail followed by p, cut to its last n bytes, in
// tail's buffer; what it drops is cleared.
func keepTail(tail, p []byte, n int) []byte {
	if len(p) >= n {
		clear(tail)
		return append(tail[:0], p[len(p)-n:]...)
	}
	return trimTail(append(tail, p...), n)
}

// trimTail returns the last n bytes of t, moved to the front of its
// buffer, or of a new one when t's is over maxKeptView (a piece's long
// text is not held for the rest of the stream); the bytes left behind
// are cleared.
func trimTail(t []byte, n int) []byte {
	if len(t) <= n && cap(t) <= maxKeptView {
		return t
	}
	if cap(t) > maxKeptView {
		short := append(make([]byte, 0, n), t[max(0, len(t)-n):]...)
		clear(t[:cap(t)])
		return short
	}
	k := copy(t, t[len(t)-n:])
	clear(t[k:])
	return t[:k]
}

// addValues appends the decoded JSON string values of p's data lines to
// their channels. Lines end as an agent's event-stream parser ends them:
// at a carriage return, a newline, or the two together; a byte order
// mark at the stream's start is not part of the first line. It records
// where p's events start: after each blank line.
//
// Of the event starts before the piece's last long bytes it keeps only
// the last (eventAt needs no other): a piece of blank lines, one a
// byte when a lone CR ends a line, grows evs by at most long+1.
func (s *streamScreen) addValues(p []byte) {
	at := s.total // p[0]'s offset in the stream
	early := s.total + int64(len(p)) - int64(s.long)
	if at == 0 && bytes.HasPrefix(p, bom) {
		p, at = p[len(bom):], int64(len(bom))
	}
	if s.cr && len(p) > 0 && p[0] == '\n' {
		// The newline of a CRLF whose carriage return ended the piece
		// before: the line it ends was read then.
		p, at = p[1:], at+1
	}
	s.cr = false
	nl := -1 // p's first newline at or after pos (len(p) if none), once looked for
	for pos := 0; pos < len(p); {
		if nl < pos {
			if nl = bytes.IndexByte(p[pos:], '\n'); nl < 0 {
				nl = len(p)
			} else {
				nl += pos
			}
		}
		end := nl
		if j := bytes.IndexByte(p[pos:nl], '\r'); j >= 0 {
			end = pos + j
		}
		line, next := p[pos:end], end+1
		switch {
		case end == len(p):
			next = end
		case p[end] == '\r' && end+1 < len(p) && p[end+1] == '\n':
			next = end + 2
		case p[end] == '\r' && end+1 == len(p):
			s.cr = true
		}
		at += int64(next - pos)
		pos = next
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			s.addLine(v)
		} else if len(line) == 0 && end < len(p) {
			// A blank line ends the event; the next starts after it.
			s.ev = at
			if n := len(s.evs); n > 0 && at <= early {
				s.evs[n-1] = at
			} else {
				s.evs = append(s.evs, at)
			}
			s.name, s.pending = s.name[:0], s.pending[:0]
		}
	}
}

// bom is the byte order mark an event stream may start with.
var bom = []byte("\ufeff")

// addLine appends the JSON string values of one data line's value,
// as sent, to their channels: a string followed by ':' is a member name,
// and names the channel of the values after it (array elements
// included); any other string is a value. The line need not be valid
// JSON; an unterminated string runs to the line's end.
//
// A model's delta events repeat one another but for their text: the
// part of the line it shares with the last one read (prev) up to the
// last string that ends in it is not read again; its values are added
// as that line's were (marks). It finds the quotes of the rest eight
// bytes at a time (quoteMask): a data line holds one every few bytes,
// too close together for a byte search a quote to pay.
func (s *streamScreen) addLine(v []byte) {
	// The name in effect where the event's last data line ended, or
	// that line's last string when this one goes on with ':'.
	first := s.name
	if i := spaces(v); i < len(v) && v[i] == ':' && len(s.pending) > 0 {
		first = s.pending
	}
	name, last := first, []byte(nil)
	pos, kept := 0, 0 // v[:pos] is read; marks[:kept] are v's
	// prev's marks hold the channels its values went to: they are v's
	// only when v starts with the name prev did.
	if len(s.prev) > 0 && bytes.Equal(first, s.prevName) {
		common := commonPrefix(v, s.prev)
		for _, m := range s.marks {
			if m.next >= common {
				// Where the lines part, v may read otherwise: a string
				// may end elsewhere, or a name be a value.
				break
			}
			if m.ch < 0 {
				name = v[m.start:m.end]
			} else {
				s.addTo(m.ch, v[m.start:m.end])
			}
			pos, kept = m.end+1, kept+1
		}
	}
	// Only a line short enough to be kept has its strings marked: a long
	// one's marks would hold many times its length.
	record := len(v) <= maxCachedLine
	s.marks = s.marks[:kept]
	in, start := false, 0 // in a string that starts at v[start]
	for base := pos; base < len(v); base += 8 {
		var m uint64
		if base+8 <= len(v) {
			m = quoteMask(binary.LittleEndian.Uint64(v[base:]))
		} else {
			for k := base; k < len(v); k++ {
				if v[k] == '"' {
					m |= 0x80 << (8 * (k - base))
				}
			}
		}
		for ; m != 0; m &= m - 1 {
			q := base + bits.TrailingZeros64(m)/8
			if !in {
				in, start = true, q+1
				continue
			}
			n := 0 // the backslashes before the quote: an odd count escapes it
			for q-1-n >= start && v[q-1-n] == '\\' {
				n++
			}
			if n%2 == 1 {
				continue
			}
			in = false
			next := q + 1 + spaces(v[q+1:])
			if next < len(v) && v[next] == ':' {
				name = v[start:q]
				s.mark(record, mark{start: start, end: q, next: next, ch: -1})
				continue
			}
			s.mark(record, mark{start: start, end: q, next: next, ch: s.addValue(name, v[start:q])})
			if next == len(v) {
				last = v[start:q]
			}
		}
	}
	if in {
		s.mark(record, mark{start: start, end: len(v), next: len(v), ch: s.addValue(name, v[start:])})
	}
	// The buffers are reused, and cleared with the screen. first may
	// be name or pending, and name may be pending: the order matters.
	if record {
		s.prev = append(s.prev[:0], v...)
		s.prevName = append(s.prevName[:0], first...)
	} else {
		s.prev, s.marks = s.prev[:0], s.marks[:0]
	}
	s.name = append(s.name[:0], keptName(name)...)
	s.pending = append(s.pending[:0], keptName(last)...)
}

// keptName returns name, or nil when it is longer than maxCachedLine:
// a name carried to the event's next data line is a member name an
// agent reads, a few bytes.
func keptName(name []byte) []byte {
	if len(name) > maxCachedLine {
		return nil
	}
	return name
}

// mark records m when record is set.
func (s *streamScreen) mark(record bool, m mark) {
	if record {
		s.marks = append(s.marks, m)
	}
}

// commonPrefix returns the length of the longest prefix a and b share.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// quoteMask returns the high bit of each byte of w, eight bytes of text
// read little-endian, that is a '"', and no other bit.
func quoteMask(w uint64) uint64 {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	x := w ^ 0x2222222222222222 // a quote's byte is now zero
	// A byte's high bit is set in t exactly when the byte is not zero;
	// no carry crosses from one byte into the next.
	t := (x&lows + lows) | x
	return ^t & highs
}

// addValue appends the string value str of member name to its channel,
// and returns the channel's index.
func (s *streamScreen) addValue(name, str []byte) int {
	i := s.channel(name)
	s.addTo(i, str)
	return i
}

// addTo appends str to channel i, added by the event being read.
func (s *streamScreen) addTo(i int, str []byte) {
	if len(str) == 0 {
		return
	}
	c := &s.channels[i]
	c.tail = append(c.tail, str...)
	c.added += len(str)
	c.n += int64(len(str))
	if k := len(c.segs) - 1; k >= 0 && c.segs[k].ev == s.ev {
		c.segs[k].end = c.n
	} else {
		c.segs = append(c.segs, seg{end: c.n, ev: s.ev})
	}
	// Only the segs of the last long bytes are needed; the others are
	// dropped once they are half the list, so each is moved once on
	// average.
	for c.lo < len(c.segs) && c.segs[c.lo].end <= c.n-int64(s.long) {
		c.lo++
	}
	if 2*c.lo >= len(c.segs) {
		c.segs, c.lo = c.segs[:copy(c.segs, c.segs[c.lo:])], 0
	}
}

// eventAt returns the start of the event that added the channel's byte
// at offset x (one of its last long bytes).
func (c *textChannel) eventAt(x int64) int64 {
	for _, g := range c.segs[c.lo:] {
		if g.end > x {
			return g.ev
		}
	}
	return c.segs[len(c.segs)-1].ev
}

// spaces returns the length of the JSON white space (but a newline,
// which ends the line) that rest starts with.
func spaces(rest []byte) int {
	for i, c := range rest {
		if c != ' ' && c != '\t' && c != '\r' {
			return i
		}
	}
	return len(rest)
}

// channel returns the index of the channel of the member name (nil
// before any name), making it if there is room, else the shared one.
func (s *streamScreen) channel(name []byte) int {
	n := len(s.channels)
	if s.shared {
		n--
	}
	for i := range n {
		if bytes.Equal(s.channels[i].name, name) {
			return i
		}
	}
	switch {
	case n < maxTextChannels:
		// n < maxTextChannels: the shared channel is not made yet.
		s.channels = append(s.channels, textChannel{name: bytes.Clone(name), open: -1})
	case !s.shared:
		s.channels, s.shared = append(s.channels, textChannel{open: -1}), true
	}
	return len(s.channels) - 1
}

// clear zeroes what the screen holds: its forms' derived data and the
// text it carried.
func (s *streamScreen) clear() {
	s.forms.clear()
	clear(s.prev[:cap(s.prev)])
	clear(s.tail[:cap(s.tail)])
	clear(s.seam[:cap(s.seam)])
	clear(s.name[:cap(s.name)])
	clear(s.pending[:cap(s.pending)])
	clear(s.prevName[:cap(s.prevName)])
	for i := range s.channels {
		clear(s.channels[i].tail[:cap(s.channels[i].tail)])
		clear(s.channels[i].name)
	}
	s.tail, s.seam, s.channels, s.prev, s.marks, s.held = nil, nil, nil, nil, nil, nil
	s.name, s.pending, s.prevName = nil, nil, nil
}
