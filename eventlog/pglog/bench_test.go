package pglog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

func benchLog(b *testing.B, dsn string) *eventlog.Log {
	l, err := eventlog.New(openAt(b, dsn), eventlog.Options{Keys: eventlogtest.TestKeys(b)})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func perSecond(b *testing.B, start time.Time, unit string) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
}

// BenchmarkAppendGroupCommit: durable appends (COMMIT with
// synchronous_commit=on) from 256 concurrent appenders to one session
// through one Log: group commit.
func BenchmarkAppendGroupCommit(b *testing.B) {
	l := benchLog(b, testDSN(b))
	ev := eventlogtest.Sample(eventlog.KindToolCall, 1, "")
	b.SetParallelism(128)
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

// BenchmarkBareInsert is the baseline: one autocommitted INSERT of a
// comparable row per operation on one connection.
func BenchmarkBareInsert(b *testing.B) {
	dsn := testDSN(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE t (session text, seq bigint, envelope bytea, hash bytea, PRIMARY KEY (session, seq))`); err != nil {
		b.Fatal(err)
	}
	env, hash := make([]byte, 220), make([]byte, 32)
	start := time.Now()
	i := 0
	for b.Loop() {
		i++
		if _, err := conn.Exec(ctx, `INSERT INTO t VALUES ($1, $2, $3, $4)`, "bench", i, env, hash); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, start, "inserts/s")
}

// BenchmarkRead100k reads and chain-checks 100,000 events in order.
func BenchmarkRead100k(b *testing.B) {
	const n = 100_000
	l := benchLog(b, testDSN(b))
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
