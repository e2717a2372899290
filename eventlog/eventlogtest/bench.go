package eventlogtest

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu/eventlog"
)

// ReportRate reports b.N operations since start as a per-second metric
// named unit (such as "appends/s").
func ReportRate(b *testing.B, start time.Time, unit string) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
}

// BenchAppendGroupCommit measures durable appends to one session of l from
// 128 x GOMAXPROCS concurrent appenders (group commit), reported as
// appends/s. A store's benchmark calls it with a fresh Log.
func BenchAppendGroupCommit(b *testing.B, l *eventlog.Log) {
	ev := Sample(eventlog.KindToolCall, 1, "")
	b.SetParallelism(128) // x GOMAXPROCS goroutines
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(context.Background(), "bench", ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
	ReportRate(b, start, "appends/s")
}

// BenchRead100k appends 100,000 events to a fresh session of l and then
// measures reading and chain-checking all of them in order.
func BenchRead100k(b *testing.B, l *eventlog.Log) {
	const n = 100_000
	ctx := context.Background()
	batch := make([]eventlog.Event, 5000)
	for i := range batch {
		batch[i] = Sample(eventlog.KindToolCall, i, "")
	}
	for seq := uint64(0); seq < n; seq += uint64(len(batch)) {
		if _, err := l.AppendAt(ctx, "bench", seq, batch...); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		count := 0
		for _, err := range l.Read(ctx, "bench", 1) {
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		if count != n {
			b.Fatalf("read %d events, want %d", count, n)
		}
	}
}
