package edge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// agentLines rewrites the event ev as a provider may frame it and an
// agent's event-stream parser still reads it the same: its lines ended
// by eol ("\n", "\r\n" or a lone "\r"), the data line cut in two data
// lines (which the parser joins with a newline, JSON white space) after
// the text's member name and colon (split "value") or between the name
// and its colon (split "colon"), and a byte order mark before it (bom).
func agentLines(ev []byte, text, eol, split string, bom bool) []byte {
	q, _ := json.Marshal(text)
	s := strings.ReplaceAll(string(ev), "\r\n", "\n")
	switch split {
	case "value":
		s = strings.Replace(s, `":`+string(q), `":`+"\ndata: "+string(q), 1)
	case "colon":
		s = strings.Replace(s, `":`+string(q), `"`+"\ndata:  :"+string(q), 1)
	}
	s = strings.ReplaceAll(s, "\n", eol)
	if bom {
		s = "\ufeff" + s
	}
	return []byte(s)
}

// TestStreamScreenReadsLinesAsAgentsDo: a key split at every offset
// across two deltas, framed as an agent's event-stream parser reads them
// (lines ended by CR, LF or CRLF, a data line cut in two after or before
// its colon, a byte order mark at the stream's start), in every
// dialect's delta event: the completing piece is refused, and the first
// is held from its delta on when the part is MinHeldPrefix bytes or
// more, so the reader never gets a MinHeldPrefix-byte prefix of a form.
// Before, a line ended by a lone CR that started with another field, and
// a value on the data line after its name, were not read into the
// text's channel: the key passed whole.
func TestStreamScreenReadsLinesAsAgentsDo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringOfN(rapid.SampledFrom([]rune("ABCXYZabcxyz0189-_+")), 16, 80, -1).Draw(t, "key")
		d := rapid.SampledFrom([]string{"anthropic", "anthropic tool input", "responses", "chat", "gemini"}).Draw(t, "dialect")
		eol := rapid.SampledFrom([]string{"\n", "\r\n", "\r"}).Draw(t, "eol")
		split1 := rapid.SampledFrom([]string{"", "value", "colon"}).Draw(t, "split first")
		split2 := rapid.SampledFrom([]string{"", "value", "colon"}).Draw(t, "split second")
		bom := rapid.Bool().Draw(t, "bom")
		one := rapid.Bool().Draw(t, "one piece")
		for k := 1; k < len(key); k++ {
			s, done := screenOf([]byte(key))
			r := &heldRelay{s: s}
			first := agentLines(deltaEvent(d, key[:k], false), key[:k], eol, split1, bom)
			second := agentLines(deltaEvent(d, key[k:], false), key[k:], eol, split2, false)
			if one {
				r.feed(t, append(bytes.Clone(first), second...))
			} else {
				r.feed(t, first)
				r.feed(t, agentLines([]byte(pingEvent), "", eol, "", false))
				r.feed(t, second)
			}
			r.end()
			done()
			if !r.refused {
				t.Fatalf("%s, eol %q, split %q/%q, bom %v, at %d: the key passed", d, eol, split1, split2, bom, k)
			}
			if f := formPrefixIn([]byte(key), r.out); k >= MinHeldPrefix && f != nil {
				t.Fatalf("%s, eol %q, split %q/%q, bom %v, at %d: the reader got %q of a form", d, eol, split1, split2, bom, k, f)
			}
		}
	})
}

// TestStreamScreenCRLFAcrossPieces: a CRLF whose CR ends one piece and
// whose LF starts the next is one line end, not a blank line: the
// event's data lines are still one event's, the name carried.
func TestStreamScreenCRLFAcrossPieces(t *testing.T) {
	key := []byte("sk-test-0123456789abcdefghijklmnop")
	s, done := screenOf(key)
	defer done()
	for _, p := range []string{"data: {\"text\":\r", "\ndata: \"sk-test-0123456789abc\"}\r\n\r\n"} {
		if s.screen([]byte(p)) {
			t.Fatal("refused without the key")
		}
		s.hold()
	}
	if !s.screen([]byte("data: {\"text\":\"defghijklmnop\"}\r\n\r\n")) {
		t.Fatal("the key passed")
	}
}

// TestStreamScreenForgetsTheCarriedName: a data line's last string,
// kept for the event's next data line, may be part of the key: clear
// zeroes it.
func TestStreamScreenForgetsTheCarriedName(t *testing.T) {
	key := []byte("sk-test-0123456789abcdefghijklmnop")
	s, done := screenOf(key)
	defer done()
	s.screen([]byte("data: \"" + string(key[:20]) + "\"\n"))
	p, n := s.pending, s.name
	s.clear()
	if bytes.Contains(p[:cap(p)], key[:20]) || bytes.Contains(n[:cap(n)], key[:20]) {
		t.Fatal("the screen kept part of the key after clear")
	}
}

// TestStreamScreenEventStartsBounded: a piece of blank lines, one a
// byte (lone carriage returns), and of short events, grows the event
// starts the screen keeps by at most the longest form's length, not by
// the piece's: an event of MaxEventBytes (gateway/modelroute) would
// otherwise hold eight bytes a byte of it.
func TestStreamScreenEventStartsBounded(t *testing.T) {
	key := []byte("sk-test-0123456789abcdefghijklmnop")
	for _, unit := range []string{"\r", "\n", "data\r\r", "\r\n"} {
		s, done := screenOf(key)
		p := []byte(strings.Repeat(unit, (1<<20)/len(unit)))
		if s.screen(p) {
			t.Fatalf("%q: refused without the key", unit)
		}
		if n := len(s.evs); n > s.long+1 {
			t.Errorf("%q: %d event starts kept after a piece of %d bytes (the longest form %d)", unit, n, len(p), s.long)
		}
		if h := s.hold(); h != 0 {
			t.Errorf("%q: a hold of %d", unit, h)
		}
		done()
	}
}
