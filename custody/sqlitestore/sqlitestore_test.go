package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/internal/sqlrecordstest"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "custody.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestConformance(t *testing.T) {
	custodytest.TestStore(t, func(t *testing.T) custody.Store {
		s, _ := openTemp(t)
		return s
	})
}

// harness gives the shared SQL store tests a fresh store and its writer.
func harness(t *testing.T) sqlrecordstest.Harness {
	s, _ := openTemp(t)
	return sqlrecordstest.Harness{Store: s, Table: "custody_records", Exec: func(query string, args ...any) error {
		_, err := s.w.ExecContext(context.Background(), query, args...)
		return err
	}}
}

// TestRawRowMove moves a row by rewriting its key columns in SQL, as an
// attacker with write access to the database file would, for each key
// column and for a boundary shift between namespace and integration.
func TestRawRowMove(t *testing.T) { sqlrecordstest.TestRawRowMove(t, harness) }

// TestConcurrentCompareAndSwap: of racing swaps from one old value,
// exactly one wins.
func TestConcurrentCompareAndSwap(t *testing.T) {
	sqlrecordstest.TestConcurrentCompareAndSwap(t, harness)
}

// TestPragmas checks that the DSN form really sets WAL and the busy
// timeout (the mattn-style "_busy_timeout" parameter is silently ignored
// by this driver).
func TestPragmas(t *testing.T) {
	s, _ := openTemp(t)
	for _, db := range []*sql.DB{s.w, s.r} {
		var mode string
		var timeout int
		if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || timeout != BusyTimeoutMillis {
			t.Errorf("journal_mode = %q, busy_timeout = %d; want wal, %d", mode, timeout, BusyTimeoutMillis)
		}
	}
}

// TestFileHoldsNoPlaintext seals a canary and searches the database file
// and its WAL, byte for byte, for every form of it.
func TestFileHoldsNoPlaintext(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	canary := []byte("sqlite-file-canary-4b8e1f0d")
	n := custody.NewNative(custody.GenerateKeyset(), s)
	b := custodytest.NewBinding("acme", "github")
	if err := n.Put(ctx, b, custody.NewSecret(bytes.Clone(canary))); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	if !bytes.Contains(all, []byte(b.Handle.String())) {
		t.Fatal("the handle is not in the database files: the search looks in the wrong place")
	}
	if leaks := custodytest.FindLeaks(canary, all); leaks != nil {
		t.Fatalf("database files hold the canary as %v", leaks)
	}
}

// TestCorruptRowIsStoreError: a row whose key columns do not form a valid
// binding is a failure of the store, not a refusal.
func TestCorruptRowIsStoreError(t *testing.T) { sqlrecordstest.TestCorruptRow(t, harness) }

// TestOversizedRowIsStoreError: see sqlrecordstest.TestOversizedRow.
func TestOversizedRowIsStoreError(t *testing.T) { sqlrecordstest.TestOversizedRow(t, harness) }

// TestRowTampering: see sqlrecordstest.TestRowTampering.
func TestRowTampering(t *testing.T) { sqlrecordstest.TestRowTampering(t, harness) }

// TestManyRows: see sqlrecordstest.TestManyRows.
func TestManyRows(t *testing.T) { sqlrecordstest.TestManyRows(t, harness) }

func TestOpenRefusesEmptyPath(t *testing.T) {
	if _, err := Open(context.Background(), ""); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
}

// TestOpenOddPaths: the path is escaped into the DSN, so a file name with
// URI syntax in it opens that exact file and cannot inject parameters.
func TestOpenOddPaths(t *testing.T) {
	for _, name := range []string{"a b", "x?_pragma=query_only(1)&y", "p%20q", "h#i"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "custody.db")
		s, err := Open(context.Background(), p)
		if err != nil {
			t.Fatalf("Open(%q): %v", p, err)
		}
		err = s.Put(context.Background(), custody.Record{Binding: custodytest.NewBinding("acme", "github"), Sealed: []byte("x")})
		s.Close()
		if err != nil {
			t.Fatalf("Put in %q: %v", p, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Open(%q) did not create that file: %v", p, err)
		}
	}
}
