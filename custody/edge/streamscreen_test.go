package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// deltaEvents are one text delta's event in each dialect the model
// route speaks, %s the delta's JSON string: what an agent concatenates.
var deltaEvents = map[string]string{
	"anthropic":            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n",
	"anthropic tool input": "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}\n\n",
	"responses":            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":7,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":%s,\"logprobs\":[]}\n\n",
	"chat":                 "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n",
	"gemini":               "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":%s}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9}}\r\n\r\n",
}

// pingEvent is an event between two deltas that adds nothing to their
// text.
const pingEvent = "event: ping\ndata: {\"type\":\"ping\"}\n\n"

// deltaEvent returns the event of dialect d carrying text, JSON-encoded
// (with "/" written "\/" when slash, as some encoders do).
func deltaEvent(d, text string, slash bool) []byte {
	q, _ := json.Marshal(text)
	if slash {
		q = bytes.ReplaceAll(q, []byte("/"), []byte(`\/`))
	}
	return fmt.Appendf(nil, deltaEvents[d], q)
}

// screenOf returns a stream screen of tok, and a function that clears it.
func screenOf(tok []byte) (*streamScreen, func()) {
	list, buf := echoForms(tok)
	s := newStreamScreen(list)
	return s, func() { s.clear(); clear(buf) }
}

// TestStreamScreenKeySplitAcrossEvents: a key a model streams in two
// text deltas, split at every offset, in every dialect's delta event: the
// event with the first part passes, the one that completes the key is
// refused, whether the two arrive in two pieces (with an event between
// them) or in one; and a stream without the key passes whole.
func TestStreamScreenKeySplitAcrossEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringOfN(rapid.SampledFrom([]rune("ABCXYZabcxyz0189-_+/")), 16, 120, -1).Draw(t, "key")
		before := rapid.StringOfN(rapid.SampledFrom([]rune(" .,\n\"\\é")), 0, 40, -1).Draw(t, "before")
		after := rapid.StringOfN(rapid.SampledFrom([]rune(" .,\n\"\\é")), 0, 40, -1).Draw(t, "after")
		d := rapid.SampledFrom([]string{"anthropic", "anthropic tool input", "responses", "chat", "gemini"}).Draw(t, "dialect")
		slash := rapid.Bool().Draw(t, "slash")
		for k := 1; k < len(key); k++ {
			first := deltaEvent(d, before+key[:k], slash)
			second := deltaEvent(d, key[k:]+after, slash)
			s, done := screenOf([]byte(key))
			if s.screen(first) {
				done()
				t.Fatalf("%s, split at %d: the first part refused alone: %q", d, k, first)
			}
			if !s.screen(append([]byte(pingEvent), second...)) {
				done()
				t.Fatalf("%s, split at %d: the key completed in the next piece passed: %q then %q", d, k, first, second)
			}
			done()
			s, done = screenOf([]byte(key))
			if !s.screen(append(first, second...)) {
				done()
				t.Fatalf("%s, split at %d: the key split across two events of one piece passed", d, k)
			}
			done()
		}
		// Without the key, in pieces of one event each, nothing is refused.
		s, done := screenOf([]byte(key))
		defer done()
		for i := 0; i+1 < len(key); i += 2 {
			if s.screen(deltaEvent(d, before+key[i:i+1]+after, slash)) {
				t.Fatalf("%s: a stream without the key refused at %d", d, i)
			}
		}
	})
}

// TestStreamScreenKeySplitAcrossPieces: a form in any piece of the body,
// not in an event's string, split across two pieces at every offset, is
// refused in the piece that completes it: the raw key, and the longest
// form JSON-escaped as "\u00XX" byte by byte, whose escaped bytes span
// exactly the screen's carry.
func TestStreamScreenKeySplitAcrossPieces(t *testing.T) {
	key := []byte("sk-ant-api03-0123456789abcdefXYZ")
	list, buf := echoForms(key)
	long := list[0]
	for _, f := range list {
		if len(f) > len(long) {
			long = f
		}
	}
	var escaped []byte
	for _, c := range long {
		escaped = fmt.Appendf(escaped, `\u%04x`, c)
	}
	clear(buf)
	pad := strings.Repeat("filler text ", 700)
	for name, form := range map[string][]byte{"raw": key, "the longest form escaped": escaped} {
		s, done := screenOf(key)
		if len(form) > s.carry {
			t.Fatalf("%s: %d bytes, over the carry of %d", name, len(form), s.carry)
		}
		done()
		body := append(append([]byte(pad), form...), pad...)
		for k := len(pad) + 1; k < len(pad)+len(form); k++ {
			s, done := screenOf(key)
			if s.screen(body[:k]) {
				t.Fatalf("%s, split at %d: the first part refused alone", name, k-len(pad))
			}
			if !s.screen(body[k:]) {
				t.Fatalf("%s, split at %d: the form completed in the next piece passed", name, k-len(pad))
			}
			done()
		}
	}
}

// TestStreamScreenChannelBound: the member names that get a channel of
// their own are at most maxTextChannels; the values of every further
// name share one more, where a key split across two of its values is
// still refused.
func TestStreamScreenChannelBound(t *testing.T) {
	key := "sk-ant-api03-0123456789abcdefXYZ"
	s, done := screenOf([]byte(key))
	defer done()
	var names strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&names, "data: {\"n%d\":\"v\"}\n\n", i)
	}
	if s.screen([]byte(names.String())) {
		t.Fatal("refused a stream without the key")
	}
	if len(s.channels) != maxTextChannels+1 || !s.shared {
		t.Fatalf("%d channels (shared: %v) after 1000 names, want %d and one shared", len(s.channels), s.shared, maxTextChannels)
	}
	if s.screen([]byte(`data: {"x1":"` + key[:10] + "\"}\n\n")) {
		t.Fatal("refused the first part alone")
	}
	if !s.screen([]byte(`data: {"x2":"` + key[10:] + "\"}\n\n")) {
		t.Fatal("a key split across two values of the shared channel passed")
	}
}

// TestStreamScreenForgets: what the screen carried is cleared with it.
func TestStreamScreenForgets(t *testing.T) {
	key := []byte("sk-ant-api03-0123456789abcdefXYZ")
	s, done := screenOf(key)
	s.screen(deltaEvent("anthropic", string(key[:20]), false))
	tail, ch := s.tail, s.channels[len(s.channels)-1].tail
	done()
	if bytes.Contains(tail[:cap(tail)], key[:20]) || bytes.Contains(ch[:cap(ch)], key[:20]) {
		t.Fatal("the screen kept part of the key after clear")
	}
}

// TestAddLineReplayAgreesWithReading: reading a line from where it parts
// from the last one (replaying the values before) adds to the channels
// exactly what reading it whole adds, on lines that share prefixes of
// any length and cut strings, escapes and names anywhere.
func TestAddLineReplayAgreesWithReading(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := rapid.SampledFrom([]string{`{"`, `":"`, `","`, `":`, `,"`, `"`, `\"`, `\\`, `a`, `bc`, ` `, `:`, `}`, `[`, `1`, "\t", "\r"})
		var lines []string
		for range rapid.IntRange(1, 12).Draw(t, "lines") {
			line := ""
			if len(lines) > 0 && rapid.Bool().Draw(t, "shares") {
				prev := lines[len(lines)-1]
				line = prev[:rapid.IntRange(0, len(prev)).Draw(t, "prefix")]
			}
			for range rapid.IntRange(0, 12).Draw(t, "pieces") {
				line += piece.Draw(t, "piece")
			}
			lines = append(lines, line)
		}
		replayed, done1 := screenOf([]byte("sk-test-0123456789abcdef"))
		defer done1()
		read, done2 := screenOf([]byte("sk-test-0123456789abcdef"))
		defer done2()
		for i, l := range lines {
			replayed.addLine([]byte(l))
			read.prev, read.marks = read.prev[:0], read.marks[:0]
			read.addLine([]byte(l))
			if len(replayed.channels) != len(read.channels) {
				t.Fatalf("line %d %q: %d channels, reading whole %d", i, l, len(replayed.channels), len(read.channels))
			}
			for j := range read.channels {
				a, b := replayed.channels[j], read.channels[j]
				if !bytes.Equal(a.name, b.name) || !bytes.Equal(a.tail, b.tail) || a.added != b.added {
					t.Fatalf("line %d of %q: channel %d is %q %q (+%d), reading whole %q %q (+%d)", i, lines, j, a.name, a.tail, a.added, b.name, b.tail, b.added)
				}
			}
		}
	})
}

// TestStreamScreenKeepsShortLinesOnly: a data line of maxCachedLine
// bytes is kept with its strings' marks, to read the next line from
// where they part; one byte more and neither is kept (a long line of
// short strings would otherwise hold many times its length in marks).
func TestStreamScreenKeepsShortLinesOnly(t *testing.T) {
	for _, n := range []int{maxCachedLine, maxCachedLine + 1} {
		s, done := screenOf([]byte("sk-test-0123456789abcdef"))
		line := strings.Repeat(`"",`, n/3) + strings.Repeat(" ", n%3)
		s.addLine([]byte(line))
		kept := len(s.prev) == n && len(s.marks) == n/3
		if n <= maxCachedLine && !kept || n > maxCachedLine && (len(s.prev) != 0 || len(s.marks) != 0) {
			t.Errorf("a line of %d bytes: kept %d bytes and %d marks", n, len(s.prev), len(s.marks))
		}
		done()
	}
}

// FuzzAddLine: no data line panics the screen's reading of its strings,
// and reading a line from where it parts from the one before adds to
// the channels what reading it whole adds.
func FuzzAddLine(f *testing.F) {
	for _, ev := range deltaEvents {
		e := string(deltaEvent("anthropic", "a\"b\\", false))
		f.Add([]byte(fmt.Sprintf(ev, `"x"`)), []byte(e))
	}
	f.Add([]byte(`{"a":"b\"`), []byte(`{"a":"b\"c":"d"}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		replayed, done1 := screenOf([]byte("sk-test-0123456789abcdef"))
		defer done1()
		read, done2 := screenOf([]byte("sk-test-0123456789abcdef"))
		defer done2()
		for _, l := range [][]byte{first, second} {
			replayed.addLine(l)
			read.prev, read.marks = read.prev[:0], read.marks[:0]
			read.addLine(l)
		}
		if len(replayed.channels) != len(read.channels) {
			t.Fatalf("%d channels, reading whole %d", len(replayed.channels), len(read.channels))
		}
		for j := range read.channels {
			a, b := replayed.channels[j], read.channels[j]
			if !bytes.Equal(a.name, b.name) || !bytes.Equal(a.tail, b.tail) || a.added != b.added {
				t.Fatalf("channel %d is %q %q, reading whole %q %q", j, a.name, a.tail, b.name, b.tail)
			}
		}
	})
}
