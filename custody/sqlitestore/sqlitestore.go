package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/sqlrecords"
	"github.com/checkfu/checkfu/internal/sqlconn"
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
//
// Its methods are those of custody.Store (Put, Get, CompareAndSwap,
// Delete, List), promoted from the implementation both SQL stores share.
// Writes go through the single writer connection, whose transactions
// begin IMMEDIATE; Get and List read through read-only connections.
type Store struct {
	*records
	w *sql.DB // one connection: the single writer
	r *sql.DB // readers (WAL lets them run beside the writer)
}

// records is the shared implementation of the custody.Store methods.
type records = sqlrecords.Store

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

// Open opens (creating if needed) the custody database at path. ctx
// bounds the schema creation; the Store outlives it.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, &custody.StoreError{Op: "open", Err: errors.New("sqlitestore: empty database path")}
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, &custody.StoreError{Op: "open", Err: err}
	}
	w.SetMaxOpenConns(1)
	if err := sqliteutil.CreateSchema(ctx, w, schema, BusyTimeoutMillis*time.Millisecond); err != nil {
		w.Close()
		return nil, &custody.StoreError{Op: "open", Err: fmt.Errorf("sqlitestore: creating schema in %q: %w", path, err)}
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, &custody.StoreError{Op: "open", Err: err}
	}
	r.SetMaxOpenConns(4)
	return &Store{records: sqlrecords.New(sqlrecords.Config{
		Name: "sqlitestore", Table: "custody_records", Read: sqlconn.SQL(r), Write: db{sqlconn.SQL(w), w},
	}), w: w, r: r}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// db adapts a *sql.DB to sqlrecords.DB.
type db struct {
	sqlconn.Conn
	db *sql.DB
}

var _ sqlrecords.DB = db{}

// InTx runs fn in a transaction of d: with the DSN's _txlock=immediate,
// it holds the database's write lock from BEGIN, so nothing changes the
// row between fn's read and its write.
func (d db) InTx(ctx context.Context, fn func(sqlconn.Conn) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqlconn.SQL(tx)); err != nil {
		return err
	}
	return tx.Commit()
}
