// Package sqllogtest is what the tests of the SQL log stores (pglog,
// sqlitelog) share: opening a store for one test, and the eventlogtest
// harness whose Rewrite changes a session's rows behind the store's back,
// as the suite's tamper tests need.
package sqllogtest

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/eventlog/internal/sqllog"
)

// Open returns the store open returns, closed when the test ends. It
// fails t when open fails.
func Open[S eventlog.Store](t testing.TB, open func(context.Context) (S, error)) S {
	t.Helper()
	s, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A Stmt is one SQL statement with its arguments ($1, $2, ...).
type Stmt struct {
	Query string
	Args  []any
}

// Harness returns the eventlogtest harness of one database of a SQL log
// store: open opens a handle on it, and run executes statements on it in
// one transaction, on a connection of its own. Its Rewrite reads the
// session through a handle from open and has run replace the session's
// rows with what edit returns.
func Harness(open func(t *testing.T) eventlog.Store, run func([]Stmt) error) eventlogtest.Harness {
	return eventlogtest.Harness{
		Open: open,
		Rewrite: func(t *testing.T, session string, edit func([]eventlog.Record) []eventlog.Record) {
			t.Helper()
			recs, err := open(t).Read(context.Background(), session, 1, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if err := run(replace(session, edit(recs))); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// replace returns the statements that replace the rows of session with
// recs.
func replace(session string, recs []eventlog.Record) []Stmt {
	stmts := []Stmt{
		{`DELETE FROM eventlog_events WHERE session = $1`, []any{session}},
		{`DELETE FROM eventlog_content WHERE session = $1`, []any{session}},
		{`DELETE FROM eventlog_shreds WHERE session = $1`, []any{session}},
	}
	for _, r := range recs {
		stmts = append(stmts, Stmt{sqllog.Unqualified.InsertEvent, []any{session, int64(r.Seq), r.Envelope, r.Hash[:]}})
		if r.Sealed != nil {
			stmts = append(stmts, Stmt{sqllog.Unqualified.InsertContent, []any{session, int64(r.Seq), r.DataKey, r.Sealed}})
		}
		if r.ShreddedBy != 0 {
			stmts = append(stmts, Stmt{sqllog.Unqualified.InsertShred, []any{session, int64(r.Seq), int64(r.ShreddedBy)}})
		}
	}
	return stmts
}
