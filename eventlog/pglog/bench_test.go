package pglog_test

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/internal/pgtest"
)

func benchLog(b *testing.B, dsn string) *eventlog.Log {
	l, err := eventlog.New(openAt(b, dsn), eventlog.Options{Keys: eventlogtest.FixedKeys(b)})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkAppendGroupCommit: durable appends (COMMIT with
// synchronous_commit=on) from 256 concurrent appenders to one session
// through one Log: group commit.
func BenchmarkAppendGroupCommit(b *testing.B) {
	eventlogtest.BenchAppendGroupCommit(b, benchLog(b, testDSN(b)))
}

// BenchmarkBareInsert is the baseline: one autocommitted INSERT of a
// comparable row per operation on one connection.
func BenchmarkBareInsert(b *testing.B) {
	dsn := testDSN(b)
	ctx := context.Background()
	conn := pgtest.Conn(b, dsn)
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
	eventlogtest.ReportRate(b, start, "inserts/s")
}

// BenchmarkRead100k reads and chain-checks 100,000 events in order.
func BenchmarkRead100k(b *testing.B) {
	eventlogtest.BenchRead100k(b, benchLog(b, testDSN(b)))
}
