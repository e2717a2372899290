package edge

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// heldRelay is what a relay does with the screen's hold
// (gateway/modelroute Relay): each piece that passes is written but for
// the last hold bytes of what is held and the piece, which wait; a
// refused piece ends it, what is held never written; at the end what is
// held is written.
type heldRelay struct {
	s       *streamScreen
	out     []byte // what reached the reader
	held    []byte
	refused bool
}

// feed screens p and writes what the screen lets through; it reports
// the hold.
func (r *heldRelay) feed(t *rapid.T, p []byte) int {
	if r.refused {
		return 0
	}
	if r.s.screen(p) {
		r.refused, r.held = true, nil
		return 0
	}
	hold := int(r.s.hold())
	all := append(r.held, p...)
	if hold < 0 || hold > len(all) {
		t.Fatalf("a hold of %d with %d bytes held and passed", hold, len(all))
	}
	r.out = append(r.out, all[:len(all)-hold]...)
	r.held = append([]byte(nil), all[len(all)-hold:]...)
	return hold
}

// end writes what is held at the stream's end.
func (r *heldRelay) end() {
	if !r.refused {
		r.out, r.held = append(r.out, r.held...), nil
	}
}

// formPrefixIn returns the first form of tok whose first MinHeldPrefix
// bytes occur in b, or nil.
func formPrefixIn(tok, b []byte) []byte {
	list, buf := echoForms(tok)
	defer clear(buf)
	for _, f := range list {
		if len(f) >= MinHeldPrefix && bytes.Contains(b, f[:MinHeldPrefix]) {
			return bytes.Clone(f[:MinHeldPrefix])
		}
	}
	return nil
}

// TestStreamScreenHoldsASplitKey: a key a model streams in two text
// deltas split at every offset k, in every dialect's delta event, in two
// pieces with an event between: the first piece is held from its delta
// on exactly when k >= MinHeldPrefix (the floor's edge: at
// MinHeldPrefix-1 nothing is held), the second is refused, and the
// reader gets no MinHeldPrefix-byte prefix of any form of the key, and
// at most k bytes of it; the event before the delta is written at once.
func TestStreamScreenHoldsASplitKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringOfN(rapid.SampledFrom([]rune("ABCXYZabcxyz0189-_+")), 16, 120, -1).Draw(t, "key")
		before := rapid.StringOfN(rapid.SampledFrom([]rune(" .,\n\"\\é")), 0, 40, -1).Draw(t, "before")
		after := rapid.StringOfN(rapid.SampledFrom([]rune(" .,\n\"\\é")), 0, 40, -1).Draw(t, "after")
		d := rapid.SampledFrom([]string{"anthropic", "anthropic tool input", "responses", "chat", "gemini"}).Draw(t, "dialect")
		for k := 1; k < len(key); k++ {
			s, done := screenOf([]byte(key))
			r := &heldRelay{s: s}
			first := deltaEvent(d, before+key[:k], false)
			hold := r.feed(t, append([]byte(pingEvent), first...))
			if want := map[bool]int{true: len(first), false: 0}[k >= MinHeldPrefix]; hold != want {
				done()
				t.Fatalf("%s, split at %d: a hold of %d bytes, want %d", d, k, hold, want)
			}
			r.feed(t, []byte(pingEvent))
			r.feed(t, deltaEvent(d, key[k:]+after, false))
			r.feed(t, []byte(pingEvent))
			r.end()
			done()
			if !r.refused {
				t.Fatalf("%s, split at %d: the key's second part passed", d, k)
			}
			// Under the floor the first delta and the event after it are
			// written (k bytes of the key); from it on, only the event
			// before the first delta.
			want := []byte(pingEvent)
			if k < MinHeldPrefix {
				want = append(append(want, first...), pingEvent...)
			}
			if !bytes.Equal(r.out, want) {
				t.Fatalf("%s, split at %d: the reader got %q, want %q", d, k, r.out, want)
			}
			if f := formPrefixIn([]byte(key), r.out); f != nil {
				t.Fatalf("%s, split at %d: the reader got %q of a form", d, k, f)
			}
		}
	})
}

// TestStreamScreenHoldReleases: a stream without the key, in deltas and
// other events, in random pieces, reaches the reader byte for byte once
// the held bytes are written at its end; a delta that ends with a
// prefix of the key and then goes on otherwise is held, and written
// before the next piece, in order; a prefix still open at the stream's
// end is written then.
func TestStreamScreenHoldReleases(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.StringOfN(rapid.SampledFrom([]rune("ABCXYZabcxyz0189-_+")), 16, 120, -1).Draw(t, "key")
		d := rapid.SampledFrom([]string{"anthropic", "anthropic tool input", "responses", "chat", "gemini"}).Draw(t, "dialect")
		n := rapid.IntRange(1, 12).Draw(t, "events")
		var events [][]byte
		for i := range n {
			// Each text starts with '~', which no key holds: a prefix
			// at the end of one is not completed by the next.
			text := "~" + rapid.StringOfN(rapid.SampledFrom([]rune(" .,\n\"\\éq")), 0, 30, -1).Draw(t, "text")
			if rapid.Bool().Draw(t, "prefix") {
				// A prefix of the key the next delta does not complete.
				text += key[:rapid.IntRange(1, len(key)-1).Draw(t, "k")]
			}
			if i%3 == 2 {
				events = append(events, []byte(pingEvent))
			}
			events = append(events, deltaEvent(d, text, false))
		}
		var stream []byte
		s, done := screenOf([]byte(key))
		defer done()
		r := &heldRelay{s: s}
		for i := 0; i < len(events); {
			m := rapid.IntRange(1, len(events)-i).Draw(t, "piece")
			p := bytes.Join(events[i:i+m], nil)
			stream = append(stream, p...)
			before := len(r.out) + len(r.held)
			r.feed(t, p)
			if r.refused {
				t.Fatalf("a stream without the key refused: %q", p)
			}
			if len(r.out)+len(r.held) != before+len(p) || !bytes.Equal(append(bytes.Clone(r.out), r.held...), stream) {
				t.Fatalf("written %q and held %q, not the stream %q in order", r.out, r.held, stream)
			}
			i += m
		}
		r.end()
		if !bytes.Equal(r.out, stream) {
			t.Fatalf("the reader got %q, not the stream %q", r.out, stream)
		}
	})
}

// TestStreamScreenHoldsAcrossPieces: a prefix of a form grows over
// three deltas in three pieces; each piece is held from the delta where
// the prefix of MinHeldPrefix bytes began, and the held bytes are never
// less than the ones held before (what was held is not written until
// the form is settled); the hold is released when the text goes on
// otherwise.
func TestStreamScreenHoldsAcrossPieces(t *testing.T) {
	key := "sk-ant-api03-0123456789abcdefXYZ"
	s, done := screenOf([]byte(key))
	defer done()
	t0 := []byte(pingEvent)
	e1 := deltaEvent("anthropic", "see "+key[:3], false)     // 3 bytes: under the floor, written
	e2 := deltaEvent("anthropic", key[3:10], false)          // 10 bytes: held from e1, whose 3 bytes are out already
	e3 := deltaEvent("anthropic", key[10:20], false)         // 20 bytes: held
	e4 := deltaEvent("anthropic", " and not the key", false) // released
	steps := []struct {
		p    []byte
		hold int
	}{
		{append(bytes.Clone(t0), e1...), 0},
		{e2, len(e2)},
		{append(bytes.Clone(t0), e3...), len(e2) + len(t0) + len(e3)},
		{e4, 0},
	}
	for i, st := range steps {
		if s.screen(st.p) {
			t.Fatalf("step %d refused", i)
		}
		if h := int(s.hold()); h != st.hold {
			t.Fatalf("step %d: a hold of %d, want %d", i, h, st.hold)
		}
	}
}
