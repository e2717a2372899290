package eventlogtest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/eventlog"
)

// A modelEvent is what the model of testSequence knows of one record.
type modelEvent struct {
	ev       eventlog.Event // zero for a shred event
	shredOf  uint64         // the seq a shred event shredded
	shredded bool
	hash     eventlog.Hash // as first read back; zero until then
}

// testSequence drives the storage through one long run per check: single
// and batched appends (large enough to cross the Log's and any store's
// read pages), stale appends, shreds, reads of whole sessions and of
// pages of the store with small limits, content reads, verification, and
// reopen points (the handle closed and a new one opened on the same
// storage), on two sessions, and compares every answer with a model.
func testSequence(t testing.TB, h harness) {
	ctx := context.Background()
	opts := keyed(t)
	// One handle at a time serves the whole property; "reopen" replaces
	// it, and the last one is closed when the subtest ends.
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	l, err := eventlog.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(rt *rapid.T) {
		sessions := []string{nextSession("seq-a"), nextSession("seq-b")}
		model := map[string][]modelEvent{}
		session := func(rt *rapid.T) string { return rapid.SampledFrom(sessions).Draw(rt, "session") }

		checkHead := func(rt *rapid.T, what, id string) {
			head, err := l.Head(ctx, id)
			if err != nil || head.Seq != uint64(len(model[id])) {
				rt.Fatalf("%s: Head(%s) = %v, %v; want seq %d", what, id, head, err, len(model[id]))
			}
		}
		readAll := func(rt *rapid.T, id string, from uint64) {
			m := model[id]
			start := max(from, 1)
			n := uint64(0)
			for e, err := range l.Read(ctx, id, from) {
				if err != nil {
					rt.Fatalf("Read(%s, %d): %v", id, from, err)
				}
				seq := start + n
				if seq > uint64(len(m)) {
					rt.Fatalf("Read(%s, %d) yielded seq %d past the model's %d events", id, from, e.Seq, len(m))
				}
				want := &m[seq-1]
				switch {
				case e.Seq != seq:
					rt.Fatalf("Read(%s, %d): entry %d has seq %d, want %d", id, from, n, e.Seq, seq)
				case want.shredOf != 0 && (e.Kind != eventlog.KindShred || e.ShredOf != want.shredOf):
					rt.Fatalf("Read(%s): seq %d = kind %v shred of %d, want the shred event of seq %d", id, seq, e.Kind, e.ShredOf, want.shredOf)
				case want.shredOf == 0 && (e.Kind != want.ev.Kind || e.Actor != want.ev.Actor || !e.Event.Time.Equal(want.ev.Time) || e.RequestID != want.ev.RequestID):
					rt.Fatalf("Read(%s): seq %d = %v, want %v", id, seq, e.Event, want.ev)
				case e.Shredded != want.shredded:
					rt.Fatalf("Read(%s): seq %d shredded %v, want %v", id, seq, e.Shredded, want.shredded)
				case !want.hash.IsZero() && e.Hash != want.hash:
					rt.Fatalf("Read(%s): seq %d has another hash than when first read", id, seq)
				}
				want.hash = e.Hash
				n++
			}
			if want := uint64(len(m)) - min(start-1, uint64(len(m))); n != want {
				rt.Fatalf("Read(%s, %d) yielded %d entries, want %d", id, from, n, want)
			}
		}
		appended := func(id string, evs ...eventlog.Event) {
			for _, ev := range evs {
				model[id] = append(model[id], modelEvent{ev: ev})
			}
		}

		actions := map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				id, ev := session(rt), Event().Draw(rt, "event")
				seq, err := l.Append(ctx, id, ev)
				if err != nil || seq != uint64(len(model[id])+1) {
					rt.Fatalf("Append(%s) = %d, %v; want seq %d", id, seq, err, len(model[id])+1)
				}
				appended(id, ev)
			},
			"append batch": func(rt *rapid.T) {
				id := session(rt)
				evs := rapid.SliceOfN(Event(), 1, 16).Draw(rt, "batch")
				head, err := l.AppendAt(ctx, id, uint64(len(model[id])), evs...)
				if err != nil || head.Seq != uint64(len(model[id])+len(evs)) {
					rt.Fatalf("AppendAt(%s, %d, %d events) = %v, %v", id, len(model[id]), len(evs), head, err)
				}
				appended(id, evs...)
			},
			"stale append": func(rt *rapid.T) {
				id := session(rt)
				n := uint64(len(model[id]))
				stale := rapid.Uint64Range(0, n+2).Filter(func(s uint64) bool { return s != n }).Draw(rt, "stale")
				if _, err := l.AppendAt(ctx, id, stale, Event().Draw(rt, "event")); !errors.Is(err, eventlog.CodeSeqConflict) {
					rt.Fatalf("AppendAt(%s, stale %d) on a log at %d = %v, want seq_conflict", id, stale, n, err)
				}
			},
			"shred": func(rt *rapid.T) {
				id := session(rt)
				m := model[id]
				if len(m) == 0 {
					return
				}
				seq := rapid.IntRange(1, len(m)).Draw(rt, "seq")
				if err := l.Shred(ctx, id, uint64(seq)); err != nil {
					rt.Fatalf("Shred(%s, %d): %v", id, seq, err)
				}
				if e := &m[seq-1]; e.shredOf == 0 && e.ev.Content != nil && !e.shredded {
					e.shredded = true
					model[id] = append(m, modelEvent{shredOf: uint64(seq)})
				}
			},
			"content": func(rt *rapid.T) {
				id := session(rt)
				m := model[id]
				if len(m) == 0 {
					return
				}
				seq := rapid.IntRange(1, len(m)).Draw(rt, "seq")
				got, err := l.Content(ctx, id, uint64(seq))
				switch e := m[seq-1]; {
				case e.shredded:
					if !errors.Is(err, eventlog.CodeContentShredded) {
						rt.Fatalf("Content(%s, %d) of shredded content = %v, want content_shredded", id, seq, err)
					}
				case e.ev.Content == nil:
					if !errors.Is(err, eventlog.CodeContentMissing) {
						rt.Fatalf("Content(%s, %d) of an event without content = %v, want content_missing", id, seq, err)
					}
				case err != nil || !bytes.Equal(got, e.ev.Content):
					rt.Fatalf("Content(%s, %d) = %q, %v; want %q", id, seq, got, err, e.ev.Content)
				}
			},
			"read": func(rt *rapid.T) {
				id := session(rt)
				readAll(rt, id, rapid.Uint64Range(0, uint64(len(model[id]))+2).Draw(rt, "from"))
			},
			"read store page": func(rt *rapid.T) {
				id := session(rt)
				n := uint64(len(model[id]))
				from := rapid.Uint64Range(1, n+2).Draw(rt, "from")
				limit := rapid.IntRange(1, 9).Draw(rt, "limit")
				recs, err := s.Read(ctx, id, from, limit)
				if err != nil {
					rt.Fatalf("Store.Read(%s, %d, %d): %v", id, from, limit, err)
				}
				want := min(uint64(limit), n+1-min(from, n+1))
				if uint64(len(recs)) != want {
					rt.Fatalf("Store.Read(%s, %d, %d) of a log at %d returned %d records, want %d", id, from, limit, n, len(recs), want)
				}
				for i, r := range recs {
					if r.Seq != from+uint64(i) {
						rt.Fatalf("Store.Read(%s, %d, %d): record %d has seq %d, want %d", id, from, limit, i, r.Seq, from+uint64(i))
					}
					if h := model[id][r.Seq-1].hash; !h.IsZero() && h != r.Hash {
						rt.Fatalf("Store.Read(%s): seq %d has another hash than when first read", id, r.Seq)
					}
				}
			},
			"verify": func(rt *rapid.T) {
				id := session(rt)
				head, err := eventlog.Verify(ctx, s, id)
				if err != nil || head.Seq != uint64(len(model[id])) {
					rt.Fatalf("Verify(%s) = %v, %v; want seq %d", id, head, err, len(model[id]))
				}
			},
			"reopen": func(rt *rapid.T) {
				next := h.Open(t)
				if !sameHandle(next, s) { // a harness whose Open returns one shared store cannot reopen
					if err := s.Close(); err != nil {
						rt.Fatalf("Close: %v", err)
					}
				}
				s = next
				var err error
				if l, err = eventlog.New(s, opts); err != nil {
					rt.Fatal(err)
				}
				for _, id := range sessions {
					checkHead(rt, "after reopen", id)
				}
			},
		}
		// Not rt.Repeat: its 30 steps a check make the property too slow
		// on a durable store; a drawn length keeps shrinking.
		for range rapid.IntRange(1, 14).Draw(rt, "steps") {
			name := rapid.SampledFrom(seqActions).Draw(rt, "action")
			rt.Logf("action %s", name)
			actions[name](rt)
		}
		for _, id := range sessions {
			checkHead(rt, "at the end", id)
			readAll(rt, id, 1)
		}
	})
}

// seqActions are the actions of testSequence, appends and reads weighted
// above the rest.
var seqActions = []string{
	"append", "append batch", "append batch", "stale append", "shred", "shred",
	"content", "read", "read", "read store page", "read store page", "verify", "reopen",
}

// sameHandle reports whether a and b are the same handle (a harness over
// one in-memory store returns it from every Open).
func sameHandle(a, b eventlog.Store) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}
