package modelroute

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// failAfter is a stream that ends with err once its bytes are read.
type failAfter struct {
	s   []byte
	err error
}

func (f *failAfter) Read(b []byte) (int, error) {
	if len(f.s) == 0 {
		return 0, f.err
	}
	n := copy(b, f.s)
	f.s = f.s[n:]
	return n, nil
}

// failWriter fails its writes after the first n.
type failWriter struct {
	bytes.Buffer
	n int
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("gone")
	}
	w.n--
	return w.Buffer.Write(p)
}

// TestRelayHoldNotWrittenWhenCut: a stream whose screen holds its last
// events is written up to them and no further when it then ends with an
// error, not io.EOF (the provider's connection broken mid-answer), with
// an event past MaxEventBytes, or when the agent's side fails: held
// events are written only at a normal end.
func TestRelayHoldNotWrittenWhenCut(t *testing.T) {
	head := "data: {\"k\":\"text\"}\n\n"
	held := "data: {\"k\":\"HOLD\"}\n\ndata: {\"k\":\"text\"}\n\n"
	for name, src := range map[string]io.Reader{
		"broken":    &failAfter{[]byte(head + held), io.ErrUnexpectedEOF},
		"too large": &failAfter{[]byte(head + held + "data: " + strings.Repeat("x", MaxEventBytes)), io.EOF},
	} {
		var out bytes.Buffer
		h := &holdScreen{from: -1}
		_, err := Relay(&out, nil, src, OpenAIChat, h.screen)
		// Too large, the whole events read with the long one are not
		// written either (nothing of that read's batch).
		if err == nil || !strings.HasPrefix(head, out.String()) || name == "broken" && out.String() != head {
			t.Errorf("%s: Relay = %v, wrote %q, want at most %q", name, err, out.String(), head)
		}
	}
	// The agent's side fails while events are held: what is held is
	// not written (and nothing after the failed write).
	w := &failWriter{n: 1}
	h := &holdScreen{from: -1}
	_, err := Relay(w, nil, &pieces{[]byte(head + held + "data: {\"k\":\"FREE\"}\n\n"), []int{len(head), len(held)}}, OpenAIChat, h.screen)
	if err == nil || w.String() != head {
		t.Errorf("a failing writer: Relay = %v, wrote %q, want only %q", err, w.String(), head)
	}
	// A normal end writes what is held, in order.
	var out bytes.Buffer
	h = &holdScreen{from: -1}
	if _, err := Relay(&out, nil, strings.NewReader(head+held), OpenAIChat, h.screen); err != nil || out.String() != head+held {
		t.Errorf("a normal end: Relay = %v, wrote %q", err, out.String())
	}
}

// FuzzRelayHolds: any stream, in any pieces, through a screen that holds
// by a script (holdScreen): no input panics the relay, and without a
// refusal it writes exactly what it writes with no screen, held or not;
// with one, a prefix of that.
func FuzzRelayHolds(f *testing.F) {
	f.Add([]byte("data: {\"k\":\"HOLD\"}\n\ndata: x\n\ndata: {\"k\":\"FREE\"}\n\n"), []byte{5, 30})
	f.Add([]byte("data: HOLD\r\n\r\ndata: REFUSE\n\n"), []byte{1})
	f.Add([]byte("data: HOLD\n\ndata: partial"), []byte{})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c) + 1
		}
		var plain, out bytes.Buffer
		_, perr := Relay(&plain, nil, &pieces{stream, append([]int(nil), sizes...)}, OpenAIChat, nil)
		h := &holdScreen{from: -1}
		_, err := Relay(&out, nil, &pieces{stream, sizes}, OpenAIChat, h.screen)
		if !bytes.Contains(stream, []byte("REFUSE")) {
			if !bytes.Equal(out.Bytes(), plain.Bytes()) || (err == nil) != (perr == nil) {
				t.Fatalf("held: %v, wrote %q; unscreened: %v, wrote %q", err, out.String(), perr, plain.String())
			}
			return
		}
		if !bytes.HasPrefix(plain.Bytes(), out.Bytes()) {
			t.Fatalf("refused: wrote %q, not a prefix of %q", out.String(), plain.String())
		}
	})
}
