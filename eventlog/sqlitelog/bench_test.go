package sqlitelog_test

import (
	"context"
	"database/sql"
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
	l, err := eventlog.New(s, eventlog.Options{Keys: eventlogtest.FixedKeys(b)})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkAppendGroupCommit: durable appends (synchronous=FULL) from 256
// concurrent appenders to one session through one Log: group commit.
func BenchmarkAppendGroupCommit(b *testing.B) {
	eventlogtest.BenchAppendGroupCommit(b, benchLog(b))
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
	eventlogtest.ReportRate(b, start, "appends/s")
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
	eventlogtest.ReportRate(b, start, "inserts/s")
}

// BenchmarkRead100k reads and chain-checks 100,000 events in order.
func BenchmarkRead100k(b *testing.B) {
	eventlogtest.BenchRead100k(b, benchLog(b))
}
