package sqlitelog_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
)

func benchLog(b *testing.B) *eventlog.Log {
	s, err := sqlitelog.Open(context.Background(), filepath.Join(b.TempDir(), "log.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	l, err := eventlog.New(s, eventlog.Options{Keys: eventlogtest.TestKeys(b)})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func perSecond(b *testing.B, start time.Time, unit string) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
}

// BenchmarkAppendGroupCommit: durable appends (synchronous=FULL) from 256
// concurrent appenders to one session through one Log: group commit.
func BenchmarkAppendGroupCommit(b *testing.B) {
	l := benchLog(b)
	ev := eventlogtest.Sample(eventlog.KindToolCall, 1, "")
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
	perSecond(b, start, "appends/s")
}

// BenchmarkAppendSequential: one appender, one transaction per event.
func BenchmarkAppendSequential(b *testing.B) {
	l := benchLog(b)
	ev := eventlogtest.Sample(eventlog.KindToolCall, 1, "")
	start := time.Now()
	for b.Loop() {
		if _, err := l.Append(context.Background(), "bench", ev); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, start, "appends/s")
}

// BenchmarkBareInsert is the baseline: the same database settings, one
// autocommitted INSERT of a comparable row per operation.
func BenchmarkBareInsert(b *testing.B) {
	db, err := sql.Open("sqlite", sqlitelog.DSN(filepath.Join(b.TempDir(), "bare.db")))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (session TEXT, seq INTEGER, envelope BLOB, hash BLOB, PRIMARY KEY (session, seq)) WITHOUT ROWID`); err != nil {
		b.Fatal(err)
	}
	env := make([]byte, 220)
	hash := make([]byte, 32)
	start := time.Now()
	i := 0
	for b.Loop() {
		i++
		if _, err := db.Exec(`INSERT INTO t VALUES (?, ?, ?, ?)`, "bench", i, env, hash); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, start, "inserts/s")
}

// BenchmarkRead100k reads and chain-checks 100,000 events in order.
func BenchmarkRead100k(b *testing.B) {
	const n = 100_000
	l := benchLog(b)
	ctx := context.Background()
	batch := make([]eventlog.Event, 5000)
	for i := range batch {
		batch[i] = eventlogtest.Sample(eventlog.KindToolCall, i, "")
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
			b.Fatal(fmt.Sprintf("read %d events, want %d", count, n))
		}
	}
}
