package sqlitelog_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
	"github.com/checkfu/checkfu/eventlog/internal/sqllogtest"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
)

func openAt(t *testing.T, path string) *sqlitelog.Store {
	t.Helper()
	return sqllogtest.Open(t, func(ctx context.Context) (*sqlitelog.Store, error) { return sqlitelog.Open(ctx, path) })
}

// execAll runs stmts in one transaction, on a connection of its own to
// the database file.
func execAll(path string, stmts []sqllogtest.Stmt) error {
	db, err := sql.Open("sqlite", sqlitelog.DSN(path))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, st := range stmts {
		if _, err := tx.Exec(st.Query, st.Args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func TestSQLiteStore(t *testing.T) {
	eventlogtest.TestStore(t, func(t *testing.T) eventlogtest.Harness {
		path := filepath.Join(t.TempDir(), "log.db")
		return sqllogtest.Harness(func(t *testing.T) eventlog.Store { return openAt(t, path) },
			func(stmts []sqllogtest.Stmt) error { return execAll(path, stmts) })
	})
}

// TestUpdateInPlaceDetected edits one envelope with an UPDATE statement,
// the way someone with the file and the sqlite3 shell would.
func TestUpdateInPlaceDetected(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")
	l, err := eventlog.New(openAt(t, path), eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := l.Append(ctx, "s", eventlogtest.Sample(eventlog.KindDenial, i, "")); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", sqlitelog.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE eventlog_events SET envelope = replace(envelope, CAST('agent:test' AS BLOB), CAST('agent:evil' AS BLOB)) WHERE session = 's' AND seq = 4`); err != nil {
		t.Fatal(err)
	}
	_, err = eventlog.Verify(ctx, l.Store(), "s")
	var ce *eventlog.ChainError
	if !asChain(err, &ce) || ce.Seq != 4 {
		t.Fatalf("Verify after UPDATE = %v, want a ChainError at seq 4", err)
	}
}

func asChain(err error, ce **eventlog.ChainError) bool {
	c, ok := err.(*eventlog.ChainError)
	*ce = c
	return ok
}

// TestZeroDataRetentionOnDisk appends events with content to a
// zero-data-retention log and then reads every byte of every file SQLite
// wrote (database, WAL, shared memory), while open and after close: the
// content, and its bare SHA-256, appear nowhere.
func TestZeroDataRetentionOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlitelog.Open(ctx, filepath.Join(dir, "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.New(s, eventlog.Options{Keys: eventlogtest.FixedKeys(t), ZeroDataRetention: true})
	if err != nil {
		t.Fatal(err)
	}
	contents := []string{
		`{"repo":"acme/private","title":"CONTENT-MARKER-tool-arguments"}`,
		"CONTENT-MARKER-error: permission denied reading /home/alice/.netrc",
		"CONTENT-MARKER-output line",
	}
	for i, c := range contents {
		if _, err := l.Append(ctx, "zdr-session", eventlogtest.Sample(eventlog.KindToolCall, i, c)); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(when string, want ...string) {
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		total := 0
		for _, f := range files {
			seen[f.Name()] = true
			b, err := os.ReadFile(filepath.Join(dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			total += len(b)
			for _, c := range contents {
				sum := sha256.Sum256([]byte(c))
				for _, needle := range [][]byte{[]byte(c), []byte("CONTENT-MARKER"), sum[:], []byte(hex.EncodeToString(sum[:]))} {
					if bytes.Contains(b, needle) {
						t.Errorf("%s: %s holds content (or its bare hash) %q", when, f.Name(), needle)
					}
				}
			}
		}
		if total == 0 {
			t.Fatalf("%s: no bytes on disk to inspect", when)
		}
		for _, name := range want {
			if !seen[name] {
				t.Errorf("%s: %s missing, so it was not inspected (files: %v)", when, name, seen)
			}
		}
		t.Logf("%s: inspected %d files, %d bytes", when, len(files), total)
	}
	scan("open", "log.db", "log.db-wal", "log.db-shm")
	// The envelope fields do reach the disk: the scan would see content.
	if b, _ := os.ReadFile(filepath.Join(dir, "log.db-wal")); !bytes.Contains(b, []byte("github.create_issue")) {
		t.Errorf("the WAL does not hold the envelope fields: the scan proves nothing")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	scan("closed", "log.db")
}

// TestShredOnDisk seals content, checks it never reaches the files in
// plaintext, shreds one event, and then reads every byte of every file:
// the shredded event's wrapped data key and ciphertext are gone, while the
// chain still verifies.
func TestShredOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlitelog.Open(ctx, filepath.Join(dir, "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := eventlog.New(s, eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(ctx, "shred", eventlogtest.Sample(eventlog.KindToolCall, i, fmt.Sprintf("CONTENT-MARKER %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Read(ctx, "shred", 2, 1)
	if err != nil || len(recs) != 1 || recs[0].Sealed == nil {
		t.Fatalf("Read: %v %v", recs, err)
	}
	victim := recs[0]
	files := func() map[string][]byte {
		out := map[string][]byte{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = b
		}
		return out
	}
	found := func(fs map[string][]byte, needle []byte) string {
		for name, b := range fs {
			if bytes.Contains(b, needle) {
				return name
			}
		}
		return ""
	}
	before := files()
	if name := found(before, []byte("CONTENT-MARKER")); name != "" {
		t.Errorf("%s holds sealed content in plaintext", name)
	}
	if found(before, victim.Sealed[:48]) == "" {
		t.Fatalf("the ciphertext is not on disk before shredding: the check below proves nothing")
	}
	if err := l.Shred(ctx, "shred", 2); err != nil {
		t.Fatal(err)
	}
	after := files()
	for what, needle := range map[string][]byte{"ciphertext": victim.Sealed[24:48], "wrapped data key": victim.DataKey[24:48]} {
		if name := found(after, needle); name != "" {
			t.Errorf("after Shred, %s still holds the %s", name, what)
		}
	}
	if _, err := eventlog.Verify(ctx, s, "shred"); err != nil {
		t.Errorf("Verify after Shred: %v", err)
	}
	if got, err := l.Content(ctx, "shred", 3); err != nil || string(got) != "CONTENT-MARKER 2" {
		t.Errorf("Content(3) after shredding 2 = %q, %v", got, err)
	}
}

// TestContentDeletedBySQLDetected deletes one event's content row with
// the sqlite3 shell's DELETE, not Log.Shred: verification names the seq,
// and Content does not pass it off as a shred. A shred through the API
// in the same log still verifies.
//
// Finding 20: before shreds were events, the deleted row read exactly
// like a shred and Verify said ok.
func TestContentDeletedBySQLDetected(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")
	l, err := eventlog.New(openAt(t, path), eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := l.Append(ctx, "s", eventlogtest.Sample(eventlog.KindToolCall, i, fmt.Sprintf("content %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Shred(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Verify(ctx, l.Store(), "s"); err != nil {
		t.Fatalf("Verify after Shred: %v", err)
	}
	db, err := sql.Open("sqlite", sqlitelog.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM eventlog_content WHERE session = 's' AND seq = 3`); err != nil {
		t.Fatal(err)
	}
	_, err = eventlog.Verify(ctx, l.Store(), "s")
	var ce *eventlog.ChainError
	if !asChain(err, &ce) || ce.Seq != 3 {
		t.Fatalf("Verify after a DELETE of seq 3's content = %v, want a ChainError at seq 3", err)
	}
	if _, err := l.Content(ctx, "s", 3); errors.Is(err, eventlog.CodeContentShredded) || !asChain(err, &ce) {
		t.Errorf("Content(3) after a DELETE = %v, want a ChainError, not %s", err, eventlog.CodeContentShredded)
	}
	if _, err := l.Content(ctx, "s", 1); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content(1) after Shred = %v, want %s", err, eventlog.CodeContentShredded)
	}
}

func TestSQLiteWitnessStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness.db")
	eventlogtest.TestWitnessStore(t, func(t *testing.T) eventlog.WitnessStore { return openAt(t, path) })
}

// TestSQLiteWitnessRaceForks: forks racing to a witness kept in this store, each through its
// own handle: exactly one wins each round, and the witness ends at it.
func TestSQLiteWitnessRaceForks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness.db")
	sqllogtest.RaceForks(t, func(t *testing.T) eventlog.WitnessStore { return openAt(t, path) })
}

func TestSQLiteSessionLister(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	eventlogtest.TestSessionLister(t, func(t *testing.T) eventlogtest.SessionListerStore { return openAt(t, path) })
}
