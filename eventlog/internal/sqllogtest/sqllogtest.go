// Package sqllogtest is what the tests of the SQL log stores (pglog,
// sqlitelog) share: opening a store for one test, and the eventlogtest
// harness whose Rewrite changes a session's rows behind the store's back,
// as the suite's tamper tests need.
package sqllogtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// RaceForks has forks of one log race to a reference witness whose state
// is in the store open returns: each fork through its own handle and
// witness, all from the same witnessed head, for several rounds. Exactly
// one fork must be accepted each round, and the witness must end at it:
// the compare-and-swap holds across handles, and no concurrent update
// rolls the witness back.
func RaceForks(t *testing.T, open func(t *testing.T) eventlog.WitnessStore) {
	ctx := context.Background()
	signer, verifiers := eventlogtest.CheckpointKeys(t, 1)
	const forks = 6
	for round := range 4 {
		session := fmt.Sprintf("race-%d", round)
		base := eventlog.NewMemoryStore()
		bl, _ := eventlog.New(base, eventlog.Options{})
		for range 2 {
			if _, err := bl.Append(ctx, session, eventlog.Event{Kind: eventlog.KindSkip, Code: "base"}); err != nil {
				t.Fatal(err)
			}
		}
		baseRecs, _ := base.Read(ctx, session, 1, 2)
		first, _ := eventlog.SignCheckpoint(signer, session, eventlog.Head{Seq: 2, Hash: baseRecs[1].Hash})
		w0, _ := eventlog.NewWitness(open(t), verifiers, nil)
		if _, err := w0.AddCheckpoint(ctx, 0, nil, first); err != nil {
			t.Fatal(err)
		}
		type fork struct {
			proof [][]byte
			cp    []byte
			head  eventlog.Head
			w     *eventlog.StoreWitness
		}
		fs := make([]fork, forks)
		for i := range fs {
			m := eventlog.NewMemoryStore()
			if err := m.Append(ctx, session, 0, baseRecs); err != nil {
				t.Fatal(err)
			}
			l, _ := eventlog.New(m, eventlog.Options{})
			for range 1 + i%2 {
				if _, err := l.Append(ctx, session, eventlog.Event{Kind: eventlog.KindSkip, Code: fmt.Sprintf("fork-%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			head, _ := m.Head(ctx, session)
			proof, err := eventlog.Proof(ctx, m, session, 2, head.Seq)
			if err != nil {
				t.Fatal(err)
			}
			cp, _ := eventlog.SignCheckpoint(signer, session, head)
			w, _ := eventlog.NewWitness(open(t), verifiers, nil)
			fs[i] = fork{proof, cp, head, w}
		}
		errs := make([]error, forks)
		var wg sync.WaitGroup
		for i := range fs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = fs[i].w.AddCheckpoint(ctx, 2, fs[i].proof, fs[i].cp)
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: forks %d and %d both accepted from one witnessed head", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, eventlog.CodeCheckpointConflict):
				t.Errorf("round %d fork %d: %v, want %s", round, i, err, eventlog.CodeCheckpointConflict)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no fork accepted", round)
		}
		st, err := open(t).Witnessed(ctx, "log.test/eventlog/"+session)
		if err != nil || st.Size != fs[winner].head.Seq || st.Hash != fs[winner].head.Hash {
			t.Errorf("round %d: witness holds %d %s, %v; want the winner's head %d %s", round, st.Size, st.Hash, err, fs[winner].head.Seq, fs[winner].head.Hash)
		}
	}
}
