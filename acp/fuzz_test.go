package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReadAndParse feeds arbitrary input, with an arbitrary small bound,
// through the line reader and the message decoder. It checks the stated
// invariants: no panic; every line is within the bound and holds no
// newline; the reader never holds more than the bound of one line (its
// line buffer's capacity stays within the bound); a line that parses
// re-encodes to messages that parse to the same encoding (no malleability
// in the round trip).
func FuzzReadAndParse(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n",
		`[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","method":"session/update","params":{}}]` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}` + "\r\n\n",
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"},"_meta":{}}}` + "\n",
		"\n\n{\"jsonrpc\":\"2.0\"}\n[]\n[1,2]\n\"s\"\n",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok\n",
		"partial",
		`{"jsonrpc":"2.0","ID":1,"id":2,"result":{"a":"\"}"}}` + "\n",
		`{"jsonrpc":"2.0","method":"session/update","params":{},"\u0070arams":{}}` + "\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i*40+8))
	}
	f.Fuzz(func(t *testing.T, data []byte, bound uint8) {
		max := int(bound) + 1
		r := NewReader(bytes.NewReader(data), max)
		var msgs []Message
		for i := 0; i < len(data)+2; i++ {
			line, err := r.ReadLine()
			if cap(r.buf) > max {
				t.Fatalf("reader holds %d bytes for a bound of %d", cap(r.buf), max)
			}
			if err != nil {
				if errors.Is(err, CodeLineTooLong) {
					continue
				}
				return // io.EOF, line_truncated: the end
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 || len(line) == 0 {
				t.Fatalf("ReadLine returned %q for bound %d", line, max)
			}
			checkUpdateFastPath(t, line)
			msgs, err = ParseLine(msgs[:0], line)
			if err != nil {
				continue
			}
			for _, m := range msgs {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatalf("re-encoding %q: %v", line, err)
				}
				again, err := ParseLine(nil, b)
				if err != nil || len(again) != 1 {
					t.Fatalf("re-encoded %s of %q does not parse: %v", b, line, err)
				}
				b2, _ := json.Marshal(again[0])
				if !bytes.Equal(b, b2) {
					t.Fatalf("round trip of %q: %s then %s", line, b, b2)
				}
			}
		}
		if _, err := r.ReadLine(); err == nil {
			t.Fatalf("reader did not end")
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, CodeLineTooLong) && !errors.Is(err, CodeLineTruncated) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// checkUpdateFastPath fails t unless the client's update fast path agrees
// with the general path on line: whenever parseUpdate accepts a line, the
// line is exactly one session/update notification whose params decode to
// the same SessionNotification.
func checkUpdateFastPath(t *testing.T, line []byte) {
	t.Helper()
	fast, ok := parseUpdate(line)
	if !ok {
		return
	}
	msgs, err := ParseLine(nil, line)
	if err != nil || len(msgs) != 1 || !msgs[0].IsNotification() || msgs[0].Method != MethodSessionUpdate {
		t.Fatalf("fast path accepted %q, general path: %v %+v", line, err, msgs)
	}
	var slow SessionNotification
	// dispatch drops an update whose params are absent or null (they do
	// not decode), so the fast path must not accept one.
	if err := json.Unmarshal(msgs[0].Params, &slow); err != nil {
		t.Fatalf("fast path accepted %q whose params do not decode: %v", line, err)
	}
	if fast.SessionID != slow.SessionID || !bytes.Equal(fast.Update, slow.Update) || !bytes.Equal(fast.Meta, slow.Meta) {
		t.Fatalf("fast path decoded %q as %+v, general path as %+v", line, fast, slow)
	}
}

func TestUpdateFastPath(t *testing.T) {
	tests := []struct {
		line string
		fast bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x"}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{},"_meta":{"a":1}}}`, true},
		{`{"jsonrpc":"1.0","method":"session/update","params":{"sessionId":"s","update":{}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/updatex","params":{"text":"session/update"}}`, false},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"session/update","update":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s","update":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"x":"session/update"}}`, false},
		{`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}]`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}} {}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{},"extra":1}}`, false},
	}
	for _, tt := range tests {
		_, ok := parseUpdate([]byte(tt.line))
		if ok != tt.fast {
			t.Errorf("parseUpdate(%s) = %v, want %v", tt.line, ok, tt.fast)
		}
		checkUpdateFastPath(t, []byte(tt.line))
	}
}

// referenceLines is the slow, obviously correct splitter the Reader must
// agree with: split on newlines, drop a trailing "\r", skip empty lines,
// "!line_too_long" for a line over max, "!line_truncated" for bytes after
// the last newline (or "!line_too_long" when they are over max).
func referenceLines(data []byte, max int) []string {
	var out []string
	parts := strings.Split(string(data), "\n")
	last := parts[len(parts)-1]
	for _, p := range parts[:len(parts)-1] {
		if len(p) > max {
			out = append(out, "!line_too_long")
			continue
		}
		p = strings.TrimSuffix(p, "\r")
		if p != "" {
			out = append(out, p)
		}
	}
	switch {
	case len(last) > max:
		out = append(out, "!line_too_long")
	case last != "":
		out = append(out, "!line_truncated")
	}
	return out
}

// FuzzReaderAgainstReference runs the Reader with a 16-byte read buffer
// (so lines span buffers and over-long lines are discarded piecewise) over
// arbitrary input, fed one byte or many at a time, and checks it agrees
// with referenceLines and that its line buffer never exceeds the bound.
func FuzzReaderAgainstReference(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\n0123456789abcdefghij\nok\npartial"), uint8(10), false)
	f.Add([]byte("0123456789012345678901234567890123456789\n\r\nx"), uint8(17), true)
	f.Add([]byte("\n\n\n"), uint8(0), false)
	f.Add([]byte(strings.Repeat("x", 50)+"\n"+strings.Repeat("y", 99)+"\n"), uint8(98), false)
	f.Fuzz(func(t *testing.T, data []byte, bound uint8, oneByte bool) {
		const bufSize = 16
		max := int(bound) + 1
		var src io.Reader = bytes.NewReader(data)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		r := newReaderSize(src, max, bufSize)
		var got []string
		for i := 0; i <= len(data)+1; i++ {
			line, err := r.ReadLine()
			if cap(r.buf) > max {
				t.Fatalf("reader holds %d bytes for a bound of %d", cap(r.buf), max)
			}
			if err == io.EOF {
				break
			}
			if code, ok := codeOf(err); ok {
				got = append(got, "!"+code)
				if code == string(CodeLineTruncated) {
					break
				}
				continue
			}
			if err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) {
					break
				}
				t.Fatalf("ReadLine: %v", err)
			}
			got = append(got, string(line))
		}
		want := referenceLines(data, max)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("Reader(max %d) = %q, reference %q", max, got, want)
		}
	})
}

func codeOf(err error) (string, bool) {
	for _, c := range []error{CodeLineTooLong, CodeLineTruncated} {
		if errors.Is(err, c) {
			return c.Error(), true
		}
	}
	return "", false
}
