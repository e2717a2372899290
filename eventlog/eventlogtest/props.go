package eventlogtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/eventlog"
)

var propSession atomic.Int64

func nextSession(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, propSession.Add(1))
}

// testPropInterleavings: any interleaving of appends (single, batched,
// stale) and reads from any seq keeps the log equal to the model: the
// accepted events, in order.
func testPropInterleavings(t testing.TB, h harness) {
	l := open(t, h, keyed(t))
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		session := nextSession("prop-order")
		var model []eventlog.Event
		for range rapid.IntRange(1, 12).Draw(rt, "ops") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				ev := Event().Draw(rt, "event")
				seq, err := l.Append(ctx, session, ev)
				if err != nil || seq != uint64(len(model)+1) {
					rt.Fatalf("Append = %d, %v; want seq %d", seq, err, len(model)+1)
				}
				model = append(model, ev)
			case 1:
				evs := rapid.SliceOfN(Event(), 1, 5).Draw(rt, "batch")
				if _, err := l.AppendAt(ctx, session, uint64(len(model)), evs...); err != nil {
					rt.Fatalf("AppendAt: %v", err)
				}
				model = append(model, evs...)
			case 2:
				stale := rapid.Uint64Range(0, uint64(len(model))+3).Filter(func(s uint64) bool { return s != uint64(len(model)) }).Draw(rt, "stale")
				if _, err := l.AppendAt(ctx, session, stale, Event().Draw(rt, "event")); !errors.Is(err, eventlog.CodeSeqConflict) {
					rt.Fatalf("AppendAt(stale %d) at %d: %v, want seq_conflict", stale, len(model), err)
				}
			case 3:
				from := rapid.Uint64Range(0, uint64(len(model))+2).Draw(rt, "from")
				checkRead(rt, l, session, from, model)
			}
		}
		checkRead(rt, l, session, 1, model)
	})
}

func checkRead(rt *rapid.T, l *eventlog.Log, session string, from uint64, model []eventlog.Event) {
	start := max(from, 1)
	want := uint64(len(model)) - min(start-1, uint64(len(model)))
	var n uint64
	for e, err := range l.Read(context.Background(), session, from) {
		if err != nil {
			rt.Fatalf("Read from %d: %v", from, err)
		}
		seq := start + n
		m := model[seq-1]
		if e.Seq != seq || !sameEnvelope(e.Event, m) {
			rt.Fatalf("Read from %d: entry %d = seq %d %v, want seq %d %v", from, n, e.Seq, e.Event, seq, m)
		}
		n++
	}
	if n != want {
		rt.Fatalf("Read from %d yielded %d entries, want %d", from, n, want)
	}
}

// testPropTamper: flipping any single byte of any stored field of any
// record is detected, at that record's seq.
func testPropTamper(t testing.TB, h harness) {
	l := open(t, h, keyed(t))
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		session := nextSession("prop-tamper")
		evs := rapid.SliceOfN(Event(), 1, 5).Draw(rt, "events")
		if _, err := l.AppendAt(ctx, session, 0, evs...); err != nil {
			rt.Fatal(err)
		}
		victim := rapid.IntRange(0, len(evs)-1).Draw(rt, "victim")
		fields := []string{"envelope", "hash"}
		if evs[victim].Content != nil {
			fields = append(fields, "data_key", "sealed")
		}
		field := rapid.SampledFrom(fields).Draw(rt, "field")
		mask := rapid.ByteRange(1, 255).Draw(rt, "mask")
		var pos int
		h.Rewrite(t, session, func(r []eventlog.Record) []eventlog.Record {
			var b []byte
			switch field {
			case "envelope":
				b = r[victim].Envelope
			case "hash":
				b = r[victim].Hash[:]
			case "data_key":
				b = r[victim].DataKey
			case "sealed":
				b = r[victim].Sealed
			}
			pos = rapid.IntRange(0, len(b)-1).Draw(rt, "pos")
			b[pos] ^= mask
			return r
		})
		_, err := eventlog.Verify(ctx, l.Store(), session)
		var ce *eventlog.ChainError
		if !errors.As(err, &ce) || ce.Seq != uint64(victim+1) {
			rt.Fatalf("flipping byte %d of %s of seq %d with %#x: Verify = %v, want a ChainError at seq %d", pos, field, victim+1, mask, err, victim+1)
		}
	})
}

// testPropConcurrentOrder: writers on separate handles append at the same
// time as a follower reads; the follower sees seqs 1..N in order, each
// writer's events in the order it appended them, and exactly what a later
// Read returns.
func testPropConcurrentOrder(t testing.TB, h harness) {
	const followGrace = 10 * time.Second
	reader := open(t, h, keyed(t))
	writers := []*eventlog.Log{open(t, h, keyed(t)), open(t, h, keyed(t)), reader}
	rapid.Check(t, func(rt *rapid.T) {
		session := nextSession("prop-conc")
		counts := rapid.SliceOfN(rapid.IntRange(0, 8), 1, len(writers)).Draw(rt, "counts")
		total := 0
		for _, c := range counts {
			total += c
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		followed := make(chan []eventlog.Entry, 1)
		go func() {
			var got []eventlog.Entry
			if total == 0 {
				followed <- got
				return
			}
			for e, err := range reader.Follow(ctx, session, 1) {
				if err != nil {
					break
				}
				got = append(got, e)
				if len(got) == total {
					break
				}
			}
			followed <- got
		}()
		var wg sync.WaitGroup
		errs := make(chan error, total)
		for w, c := range counts {
			wg.Go(func() {
				for i := range c {
					ev := eventlog.Event{Kind: eventlog.KindToolCall, Actor: fmt.Sprintf("w%d", w), RequestID: strconv.Itoa(i)}
					if _, err := writers[w].Append(ctx, session, ev); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			rt.Fatalf("Append: %v", err)
		}
		// Every append has returned, so the follower must see them all
		// soon; a follower still waiting after followGrace never will
		// (a store that lost or misnumbered an event), and fails instead
		// of hanging the suite.
		var got []eventlog.Entry
		select {
		case got = <-followed:
		case <-time.After(followGrace):
			cancel()
			got = <-followed
		}
		if len(got) != total {
			rt.Fatalf("follower saw %d events, want %d", len(got), total)
		}
		next := map[string]int{}
		for i, e := range got {
			if e.Seq != uint64(i+1) {
				rt.Fatalf("follower saw seq %d at position %d", e.Seq, i)
			}
			if want := strconv.Itoa(next[e.Actor]); e.RequestID != want {
				rt.Fatalf("writer %s: event %s at seq %d, want its event %s next", e.Actor, e.RequestID, e.Seq, want)
			}
			next[e.Actor]++
		}
		var read []eventlog.Entry
		for e, err := range reader.Read(context.Background(), session, 1) {
			if err != nil {
				rt.Fatalf("Read: %v", err)
			}
			read = append(read, e)
		}
		if len(read) != len(got) {
			rt.Fatalf("Read gave %d events, the follower %d", len(read), len(got))
		}
		for i := range read {
			if read[i].Hash != got[i].Hash {
				rt.Fatalf("Read and Follow disagree at seq %d", i+1)
			}
		}
	})
}

// sameEnvelope reports whether a and b agree on every envelope field (the
// JSON form holds each of them and never the content), the request
// context included.
func sameEnvelope(a, b eventlog.Event) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}
