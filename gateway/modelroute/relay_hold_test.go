package modelroute

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
)

// holdScreen is a screen that holds as the edge's does, by a script in
// the events: an event with HOLD starts a hold (if none is open), one
// with FREE ends it, one with REFUSE is refused.
type holdScreen struct {
	total, from int // from is where the open hold starts, or -1
}

func (h *holdScreen) screen(p []byte) (int, error) {
	if bytes.Contains(p, []byte("REFUSE")) {
		return 0, checkfu.Refuse(CodeModelEventTooLarge, "refused")
	}
	for ev := range bytes.SplitAfterSeq(p, []byte("\n\n")) {
		switch {
		case bytes.Contains(ev, []byte("FREE")):
			h.from = -1
		case bytes.Contains(ev, []byte("HOLD")) && h.from < 0:
			h.from = h.total
		}
		h.total += len(ev)
	}
	if h.from < 0 {
		return 0, nil
	}
	return h.total - h.from, nil
}

// TestRelayHolds: with a screen that holds back the end of what it
// passed, in streams of events read in random pieces: without a refusal
// the agent gets the stream byte for byte, in order (what is held is
// written before the batch after it, and at the end); with one, a
// prefix of the stream, never an event held when the refused batch
// came.
func TestRelayHolds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kinds := rapid.SliceOfN(rapid.SampledFrom([]string{"text", "text", "HOLD", "FREE", "REFUSE"}), 1, 20).Draw(t, "events")
		var s strings.Builder
		for i, k := range kinds {
			fmt.Fprintf(&s, "data: {\"n\":%d,\"k\":%q}\n\n", i, k)
		}
		stream := []byte(s.String())
		sizes := rapid.SliceOfN(rapid.IntRange(1, 200), 0, 40).Draw(t, "sizes")
		var out bytes.Buffer
		h := &holdScreen{from: -1}
		_, err := Relay(&out, nil, &pieces{stream, sizes}, OpenAIChat, h.screen)
		refuse := bytes.Index(stream, []byte("REFUSE"))
		if refuse < 0 {
			if err != nil || !bytes.Equal(out.Bytes(), stream) {
				t.Fatalf("Relay = %v, wrote %q, want the stream %q", err, out.String(), stream)
			}
			return
		}
		if err == nil || !bytes.HasPrefix(stream, out.Bytes()) || bytes.Contains(out.Bytes(), []byte("REFUSE")) {
			t.Fatalf("Relay = %v, wrote %q, want a prefix of %q before REFUSE", err, out.String(), stream)
		}
		// The last HOLD before the refusal, with no FREE after it, was
		// never written.
		if hold := bytes.LastIndex(stream[:refuse], []byte("HOLD")); hold >= 0 && !bytes.Contains(stream[hold:refuse], []byte("FREE")) && out.Len() > hold {
			t.Fatalf("an event held when the stream was cut was written: %q", out.String())
		}
	})
}

// TestRelayHeldBound: a screen that holds MaxHeldBytes of a longer
// stream gets it all written at the end; one byte more cuts the stream
// with CodeModelStreamHeldTooLong, and what was held is not written.
func TestRelayHeldBound(t *testing.T) {
	ev := "data: " + strings.Repeat("x", 1016) + "\n\n" // 1 KiB
	stream := strings.Repeat(ev, MaxHeldBytes/len(ev)+64)
	for _, hold := range []int{MaxHeldBytes, MaxHeldBytes + 1} {
		total := 0
		var out byteCount
		_, err := Relay(&out, nil, strings.NewReader(stream), OpenAIChat, func(p []byte) (int, error) {
			total += len(p)
			return min(hold, total), nil
		})
		switch {
		case hold == MaxHeldBytes && (err != nil || out.n != len(stream)):
			t.Fatalf("holding MaxHeldBytes: Relay = %v, wrote %d of %d", err, out.n, len(stream))
		case hold > MaxHeldBytes && (!errors.Is(err, CodeModelStreamHeldTooLong) || out.n > len(stream)-MaxHeldBytes):
			t.Fatalf("holding MaxHeldBytes+1: Relay = %v, wrote %d of %d", err, out.n, len(stream))
		}
	}
	// A screen that asks to hold more than it was given is cut too.
	_, err := Relay(&byteCount{}, nil, strings.NewReader(ev), OpenAIChat, func(p []byte) (int, error) { return len(p) + 1, nil })
	if !errors.Is(err, CodeModelStreamHeldTooLong) {
		t.Fatalf("a hold past what was screened: %v", err)
	}
}

// byteCount counts what is written to it.
type byteCount struct{ n int }

func (c *byteCount) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
