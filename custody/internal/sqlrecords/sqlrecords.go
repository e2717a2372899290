package sqlrecords

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/internal/sqlconn"
)

// A DB is a connection pool that can also run a transaction.
type DB interface {
	sqlconn.Conn
	// InTx runs fn in one transaction and commits it when fn returns
	// nil. Otherwise it rolls back and returns fn's error unchanged.
	InTx(ctx context.Context, fn func(sqlconn.Conn) error) error
}

// A Config describes one store's table and connections.
type Config struct {
	// Name is the store's package name, the prefix of the errors it makes
	// itself, such as "pgstore: corrupt row: ...".
	Name string
	// Table is the table's name, quoted as the SQL dialect needs.
	Table string
	// LockRow ends the SELECT that reads a record for CompareAndSwap:
	// " FOR UPDATE" where that locks the row until the transaction ends
	// (PostgreSQL), and "" where every transaction of Write holds the
	// write lock of the whole database from its start (SQLite's BEGIN
	// IMMEDIATE).
	LockRow string
	// Read runs Get and List.
	Read sqlconn.Querier
	// Write runs Put, CompareAndSwap and Delete. It may be the same
	// connection pool as Read.
	Write DB
}

// A Store is a custody.Store over a table of the SQL stores' layout. It
// is safe for concurrent use if its DBs are.
type Store struct {
	name  string
	read  sqlconn.Querier
	write DB

	put, get, lock, update, del, list string
}

var _ custody.Store = (*Store)(nil)

// New returns the Store c describes.
func New(c Config) *Store {
	where := ` WHERE namespace = $1 AND integration = $2 AND handle = $3`
	return &Store{
		name: c.Name, read: c.Read, write: c.Write,
		put: `INSERT INTO ` + c.Table + ` (namespace, integration, handle, sealed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, integration, handle) DO UPDATE SET sealed = excluded.sealed`,
		get:    `SELECT namespace, integration, handle, ` + sealedPrefix + ` FROM ` + c.Table + where,
		lock:   `SELECT ` + sealedPrefix + ` FROM ` + c.Table + where + c.LockRow,
		update: `UPDATE ` + c.Table + ` SET sealed = $4` + where,
		del:    `DELETE FROM ` + c.Table + where,
		list:   `SELECT namespace, integration, handle FROM ` + c.Table + ` WHERE namespace = $1 ORDER BY integration, handle LIMIT ` + fmt.Sprint(custody.MaxListBindings+1),
	}
}

// sealedPrefix reads at most custody.MaxSealedBytes+1 bytes of a row's
// sealed column (substr counts bytes of a BLOB in SQLite and of a bytea
// in PostgreSQL), so a database writer's oversized row costs one bound's
// worth of memory, not its size, on every read. Get refuses a longer
// prefix as a corrupt row; CompareAndSwap finds it unequal to any record
// Get can return.
var sealedPrefix = fmt.Sprintf("substr(sealed, 1, %d)", custody.MaxSealedBytes+1)

// key returns the key columns of b as statement arguments $1 to $3.
func key(b custody.Binding, more ...any) []any {
	args := make([]any, 0, 3+len(more))
	return append(append(args, b.Namespace, b.Integration, b.Handle.String()), more...)
}

// Put implements custody.Store.
func (s *Store) Put(ctx context.Context, rec custody.Record) error {
	b := rec.Binding
	if err := b.Validate(); err != nil {
		return err
	}
	if _, err := s.write.Exec(ctx, s.put, key(b, nonNil(rec.Sealed))...); err != nil {
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
	err := s.read.QueryRow(ctx, s.get, key(b)...).Scan(&ns, &integ, &handle, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return custody.Record{}, notFound(b)
	}
	if err != nil {
		return custody.Record{}, &custody.StoreError{Op: "get", Err: err}
	}
	got, err := s.rowBinding(ns, integ, handle)
	if err != nil {
		return custody.Record{}, &custody.StoreError{Op: "get", Err: err}
	}
	if len(sealed) > custody.MaxSealedBytes {
		return custody.Record{}, &custody.StoreError{Op: "get", Err: fmt.Errorf("%s: corrupt row: its sealed record is longer than custody.MaxSealedBytes (%d)", s.name, custody.MaxSealedBytes)}
	}
	return custody.Record{Binding: got, Sealed: nonNil(sealed)}, nil
}

// CompareAndSwap implements custody.Store in one transaction of the
// write DB: it reads the record with Config.LockRow and updates it only
// if it is still old.
func (s *Store) CompareAndSwap(ctx context.Context, b custody.Binding, old, sealed []byte) error {
	if err := b.Validate(); err != nil {
		return err
	}
	err := s.write.InTx(ctx, func(tx sqlconn.Conn) error {
		var cur []byte
		err := tx.QueryRow(ctx, s.lock, key(b)...).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(b)
		}
		if err != nil {
			return err
		}
		if len(cur) > custody.MaxSealedBytes || !bytes.Equal(cur, old) {
			return checkfu.Refuse(custody.CodeRecordConflict, "custody: the record at %s changed since it was read", b)
		}
		_, err = tx.Exec(ctx, s.update, key(b, nonNil(sealed))...)
		return err
	})
	if _, refused := checkfu.CodeOf(err); err == nil || refused {
		return err
	}
	return &custody.StoreError{Op: "compare_and_swap", Err: err}
}

// Delete implements custody.Store.
func (s *Store) Delete(ctx context.Context, b custody.Binding) error {
	if err := b.Validate(); err != nil {
		return err
	}
	n, err := s.write.Exec(ctx, s.del, key(b)...)
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
	probe := custody.Binding{Namespace: namespace, Integration: "x", Handle: address.NewHandle()}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	rows, err := s.read.Query(ctx, s.list, namespace)
	if err != nil {
		return nil, &custody.StoreError{Op: "list", Err: err}
	}
	defer rows.Close()
	var out []custody.Binding
	// One destination slice for every row: passed through an interface,
	// a fresh one per row would be a heap allocation per row.
	var ns, integ, handle string
	dest := []any{&ns, &integ, &handle}
	for rows.Next() {
		if len(out) == custody.MaxListBindings {
			return nil, &custody.StoreError{Op: "list", Err: fmt.Errorf("%s: namespace %s holds more than custody.MaxListBindings (%d) records", s.name, namespace, custody.MaxListBindings)}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, &custody.StoreError{Op: "list", Err: err}
		}
		b, err := s.rowBinding(ns, integ, handle)
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
func (s *Store) rowBinding(ns, integ, handle string) (custody.Binding, error) {
	b, err := address.BindingFromColumns(ns, integ, handle)
	if err != nil {
		return custody.Binding{}, fmt.Errorf("%s: corrupt row: %w", s.name, err)
	}
	return b, nil
}

func notFound(b custody.Binding) error {
	return checkfu.Refuse(custody.CodeRecordNotFound, "custody: no record at %s", b)
}

// nonNil maps nil to an empty slice: NOT NULL columns hold empty records.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
