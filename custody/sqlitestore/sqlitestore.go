// Package sqlitestore is the embedded default custody.Store: sealed records
// in one SQLite file, through modernc.org/sqlite (pure Go, no cgo).
//
// Invariants:
//
//   - The table holds the key columns (namespace, integration, handle) and
//     the sealed bytes, nothing else: no plaintext and no copy of the
//     address beside the ciphertext. Get rebuilds the Binding from the key
//     columns it read, and that is the address the record must open at.
//   - Key columns compare as bytes (BINARY collation), so "GitHub" and
//     "github" are different addresses, as in every other Store.
//   - The database runs in WAL mode with a busy timeout; writes go through
//     one connection and begin IMMEDIATE transactions, so concurrent
//     writers queue instead of failing with SQLITE_BUSY.
//   - Failures of SQLite are *custody.StoreError; refusals are the same
//     *checkfu.Refusal codes as custody.MemStore.
package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/internal/sqliteutil"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// BusyTimeoutMillis is how long a connection waits for a lock held by
// another connection or process before failing.
const BusyTimeoutMillis = 5000

const schema = `CREATE TABLE IF NOT EXISTS custody_records (
	namespace   TEXT NOT NULL,
	integration TEXT NOT NULL,
	handle      TEXT NOT NULL,
	sealed      BLOB NOT NULL,
	PRIMARY KEY (namespace, integration, handle)
) WITHOUT ROWID`

// A Store is a custody.Store in a SQLite file. It is safe for concurrent
// use; close it with Close.
type Store struct {
	w *sql.DB // one connection: the single writer
	r *sql.DB // readers (WAL lets them run beside the writer)
}

var _ custody.Store = (*Store)(nil)

// dsn returns the driver DSN for path with the pragmas every connection
// needs, using the driver's documented "_pragma=NAME(VALUE)" form (older
// versions of the driver silently ignored the "_busy_timeout" spelling;
// TestPragmas checks the effective values). The path is URI-escaped, so it
// cannot add parameters of its own.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMillis))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens (creating if needed) the custody database at path.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, &custody.StoreError{Op: "open", Err: errors.New("sqlitestore: empty database path")}
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, &custody.StoreError{Op: "open", Err: err}
	}
	w.SetMaxOpenConns(1)
	if err := sqliteutil.CreateSchema(context.Background(), w, schema, BusyTimeoutMillis*time.Millisecond); err != nil {
		w.Close()
		return nil, &custody.StoreError{Op: "open", Err: fmt.Errorf("sqlitestore: creating schema in %q: %w", path, err)}
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, &custody.StoreError{Op: "open", Err: err}
	}
	r.SetMaxOpenConns(4)
	return &Store{w: w, r: r}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// Put implements custody.Store.
func (s *Store) Put(ctx context.Context, rec custody.Record) error {
	b := rec.Binding
	if err := b.Validate(); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO custody_records (namespace, integration, handle, sealed)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (namespace, integration, handle) DO UPDATE SET sealed = excluded.sealed`,
		b.Namespace, b.Integration, b.Handle.String(), nonNil(rec.Sealed))
	if err != nil {
		return &custody.StoreError{Op: "put", Err: err}
	}
	return nil
}

// Get implements custody.Store. The returned Binding is rebuilt from the
// key columns of the row.
func (s *Store) Get(ctx context.Context, b custody.Binding) (custody.Record, error) {
	if err := b.Validate(); err != nil {
		return custody.Record{}, err
	}
	var ns, integ, handle string
	var sealed []byte
	err := s.r.QueryRowContext(ctx, `SELECT namespace, integration, handle, sealed FROM custody_records
		WHERE namespace = ? AND integration = ? AND handle = ?`,
		b.Namespace, b.Integration, b.Handle.String()).Scan(&ns, &integ, &handle, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return custody.Record{}, notFound(b)
	}
	if err != nil {
		return custody.Record{}, &custody.StoreError{Op: "get", Err: err}
	}
	got, err := rowBinding(ns, integ, handle)
	if err != nil {
		return custody.Record{}, &custody.StoreError{Op: "get", Err: err}
	}
	return custody.Record{Binding: got, Sealed: nonNil(sealed)}, nil
}

// CompareAndSwap implements custody.Store.
func (s *Store) CompareAndSwap(ctx context.Context, b custody.Binding, old, sealed []byte) error {
	if err := b.Validate(); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	defer tx.Rollback()
	var cur []byte
	err = tx.QueryRowContext(ctx, `SELECT sealed FROM custody_records
		WHERE namespace = ? AND integration = ? AND handle = ?`,
		b.Namespace, b.Integration, b.Handle.String()).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(b)
	}
	if err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	if !bytes.Equal(cur, old) {
		return checkfu.Refuse(custody.CodeConflict, "custody: the record at %s changed since it was read", b)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE custody_records SET sealed = ?
		WHERE namespace = ? AND integration = ? AND handle = ?`,
		nonNil(sealed), b.Namespace, b.Integration, b.Handle.String()); err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	if err := tx.Commit(); err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	return nil
}

// Delete implements custody.Store.
func (s *Store) Delete(ctx context.Context, b custody.Binding) error {
	if err := b.Validate(); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM custody_records
		WHERE namespace = ? AND integration = ? AND handle = ?`,
		b.Namespace, b.Integration, b.Handle.String())
	if err != nil {
		return &custody.StoreError{Op: "delete", Err: err}
	}
	n, err := res.RowsAffected()
	if err != nil {
		return &custody.StoreError{Op: "delete", Err: err}
	}
	if n == 0 {
		return notFound(b)
	}
	return nil
}

// List implements custody.Store.
func (s *Store) List(ctx context.Context, namespace string) ([]custody.Binding, error) {
	probe := custody.Binding{Namespace: namespace, Integration: "x", Handle: custody.NewHandle()}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, integration, handle FROM custody_records
		WHERE namespace = ? ORDER BY integration, handle`, namespace)
	if err != nil {
		return nil, &custody.StoreError{Op: "list", Err: err}
	}
	defer rows.Close()
	var out []custody.Binding
	for rows.Next() {
		var ns, integ, handle string
		if err := rows.Scan(&ns, &integ, &handle); err != nil {
			return nil, &custody.StoreError{Op: "list", Err: err}
		}
		b, err := rowBinding(ns, integ, handle)
		if err != nil {
			return nil, &custody.StoreError{Op: "list", Err: err}
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, &custody.StoreError{Op: "list", Err: err}
	}
	return out, nil
}

// rowBinding rebuilds a Binding from a row's key columns; a row that does
// not hold a valid binding is corrupt.
func rowBinding(ns, integ, handle string) (custody.Binding, error) {
	b, err := custody.BindingFromColumns(ns, integ, handle)
	if err != nil {
		return custody.Binding{}, fmt.Errorf("sqlitestore: corrupt row: %w", err)
	}
	return b, nil
}

func notFound(b custody.Binding) error {
	return checkfu.Refuse(custody.CodeNotFound, "custody: no record at %s", b)
}

// nonNil maps nil to an empty slice: NOT NULL columns hold empty records.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
