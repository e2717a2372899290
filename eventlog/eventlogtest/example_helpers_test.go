package eventlogtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// The generators feed an integrator's rapid properties; this one checks
// that every valid event survives the JSON round trip without its
// content. It needs a test's *testing.T, so it is compiled, not run.
func Example_property() {
	testRoundTrip := func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			ev := eventlogtest.Event().Draw(t, "event")
			ev.RunID = eventlogtest.Ident().Draw(t, "run")
			b, err := ev.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := eventlog.DecodeEvent(b)
			if err != nil {
				t.Fatalf("DecodeEvent(%s): %v", b, err)
			}
			ev.Content = nil // content never appears in JSON
			if !back.Time.Equal(ev.Time) || back.Kind != ev.Kind || back.RunID != ev.RunID {
				t.Fatalf("round trip changed %+v into %+v", ev, back)
			}
		})
	}
	_ = testRoundTrip // func TestRoundTrip(t *testing.T) in a _test.go file
}

// Outside rapid.Check, Example draws one value for a given seed.
func ExampleEvent() {
	ok := true
	for i := range 50 {
		ev := eventlogtest.Event().Example(i)
		ok = ok && ev.Validate() == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleIdent() {
	ok := true
	for i := range 50 {
		ev := eventlog.Event{Kind: eventlog.KindToolCall, Actor: eventlogtest.Ident().Example(i)}
		ok = ok && ev.Validate() == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleSample() {
	ctx := context.Background()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	seq, err := l.Append(ctx, "s", eventlogtest.Sample(eventlog.KindDenial, 1, ""))
	fmt.Println(seq, err)
	for e, err := range l.Read(ctx, "s", 1) {
		fmt.Println(e.Kind, e.Label, e.Time.Format(time.RFC3339Nano), err)
	}
	// Output:
	// 1 <nil>
	// denial isolated 2026-11-30T08:00:00.000000001Z <nil>
}

// ChainHash is how a forger would recompute a record's hash. A record
// taken from another log carries a matching hash, yet the chain catches it
// where it fails to link.
func ExampleChainHash() {
	ctx := context.Background()
	logOf := func(actor string) []eventlog.Record {
		store := eventlog.NewMemoryStore()
		l, _ := eventlog.New(store, eventlog.Options{})
		for i := range 3 {
			ev := eventlogtest.Sample(eventlog.KindToolCall, i, "")
			ev.Actor = actor
			l.Append(ctx, "s", ev)
		}
		recs, _ := store.Read(ctx, "s", 1, 10)
		return recs
	}
	genuine, forged := logOf("agent:alice"), logOf("agent:mallory")
	fmt.Println(eventlogtest.ChainHash(forged[1].Envelope) == forged[1].Hash)

	// Splice the forged seq 2 into a copy of the real log, as an attacker
	// with write access to the storage would.
	tampered := eventlog.NewMemoryStore()
	if err := tampered.Append(ctx, "s", 0, []eventlog.Record{genuine[0], forged[1], genuine[2]}); err != nil {
		panic(err)
	}
	_, err := eventlog.Verify(ctx, tampered, "s")
	var ce *eventlog.ChainError
	fmt.Println(errors.As(err, &ce), ce.Seq, errors.Is(err, eventlog.CodeChainBroken))
	// Output:
	// true
	// true 2 true
}

// The keys, the suite and the benchmarks need a test's testing.T or
// testing.B, so this example is compiled, not run. A store's own tests
// call them like this.
func ExampleFixedKeys() {
	testContent := func(t *testing.T) {
		l, err := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
		if err != nil {
			t.Fatal(err)
		}
		seq, err := l.Append(context.Background(), "s", eventlogtest.Sample(eventlog.KindToolCall, 1, "output"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := l.Content(context.Background(), "s", seq); string(got) != "output" || err != nil {
			t.Fatalf("Content = %q, %v; want %q", got, err, "output")
		}
	}
	_ = testContent // func TestContent(t *testing.T) in a _test.go file
}

// A store's benchmarks, in its _test.go file; run them with
//
//	go test -run '^$' -bench . -benchtime 3x ./yourstore
//
// This example is compiled, not run.
func ExampleBenchAppendGroupCommit() {
	benchmarkAppend := func(b *testing.B) {
		l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{}) // your store
		eventlogtest.BenchAppendGroupCommit(b, l)                           // reports appends/s
	}
	_ = benchmarkAppend // func BenchmarkAppend(b *testing.B)
}

func ExampleBenchRead100k() {
	benchmarkRead := func(b *testing.B) { // func BenchmarkRead(b *testing.B)
		l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{}) // your store
		eventlogtest.BenchRead100k(b, l)
	}
	_ = benchmarkRead
}

// ReportRate turns b.N operations into a per-second metric. This example
// is compiled, not run.
func ExampleReportRate() {
	benchmarkHead := func(b *testing.B) { // func BenchmarkHead(b *testing.B)
		ctx := context.Background()
		store := eventlog.NewMemoryStore()
		start := time.Now()
		for range b.N {
			if _, err := store.Head(ctx, "s"); err != nil {
				b.Fatal(err)
			}
		}
		eventlogtest.ReportRate(b, start, "heads/s")
	}
	_ = benchmarkHead
}
