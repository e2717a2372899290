// Package pgstore is the custody.Store for multi-host deployments: sealed
// records in PostgreSQL, through pgx v5.
//
// Invariants:
//
//   - The table holds the key columns (namespace, integration, handle) and
//     the sealed bytes, nothing else: no plaintext and no copy of the
//     address beside the ciphertext. Get rebuilds the Binding from the key
//     columns it read, and that is the address the record must open at.
//   - Key columns use the "C" collation, so they compare and sort as bytes,
//     exactly like custody.MemStore and the SQLite store.
//   - All statements are parameterised; the schema name is validated and
//     quoted as an identifier.
//   - Failures of PostgreSQL are *custody.StoreError; refusals are the same
//     *checkfu.Refusal codes as custody.MemStore.
package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A Store is a custody.Store in one PostgreSQL schema. It is safe for
// concurrent use. It does not own the pool.
type Store struct {
	pool  *pgxpool.Pool
	table string // quoted, schema-qualified table name
}

var _ custody.Store = (*Store)(nil)

// New returns a Store over pool that keeps its records in the table
// custody_records of schema, creating both if needed. schema must be 1 to
// 63 characters of a-z, 0-9 and _, starting with a letter or _.
func New(ctx context.Context, pool *pgxpool.Pool, schema string) (*Store, error) {
	if !validSchema(schema) {
		return nil, &custody.StoreError{Op: "open", Err: fmt.Errorf("pgstore: schema %q is not a valid name (want 1-63 of a-z 0-9 _, not starting with a digit)", schema)}
	}
	s := &Store{pool: pool, table: pgx.Identifier{schema, "custody_records"}.Sanitize()}
	ddl := fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %s;
CREATE TABLE IF NOT EXISTS %s (
	namespace   text COLLATE "C" NOT NULL,
	integration text COLLATE "C" NOT NULL,
	handle      text COLLATE "C" NOT NULL,
	sealed      bytea NOT NULL,
	PRIMARY KEY (namespace, integration, handle)
)`, pgx.Identifier{schema}.Sanitize(), s.table)
	if _, err := pool.Exec(ctx, ddl); err != nil {
		return nil, &custody.StoreError{Op: "open", Err: fmt.Errorf("pgstore: creating schema %q: %w", schema, err)}
	}
	return s, nil
}

func validSchema(s string) bool {
	if len(s) == 0 || len(s) > 63 || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Put implements custody.Store.
func (s *Store) Put(ctx context.Context, rec custody.Record) error {
	b := rec.Binding
	if err := b.Validate(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (namespace, integration, handle, sealed)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, integration, handle) DO UPDATE SET sealed = EXCLUDED.sealed`,
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
	err := s.pool.QueryRow(ctx, `SELECT namespace, integration, handle, sealed FROM `+s.table+`
		WHERE namespace = $1 AND integration = $2 AND handle = $3`,
		b.Namespace, b.Integration, b.Handle.String()).Scan(&ns, &integ, &handle, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
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
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	defer tx.Rollback(ctx)
	var cur []byte
	err = tx.QueryRow(ctx, `SELECT sealed FROM `+s.table+`
		WHERE namespace = $1 AND integration = $2 AND handle = $3 FOR UPDATE`,
		b.Namespace, b.Integration, b.Handle.String()).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(b)
	}
	if err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	if !bytes.Equal(cur, old) {
		return checkfu.Refuse(custody.CodeConflict, "custody: the record at %s changed since it was read", b)
	}
	if _, err := tx.Exec(ctx, `UPDATE `+s.table+` SET sealed = $4
		WHERE namespace = $1 AND integration = $2 AND handle = $3`,
		b.Namespace, b.Integration, b.Handle.String(), nonNil(sealed)); err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	if err := tx.Commit(ctx); err != nil {
		return &custody.StoreError{Op: "compare_and_swap", Err: err}
	}
	return nil
}

// Delete implements custody.Store.
func (s *Store) Delete(ctx context.Context, b custody.Binding) error {
	if err := b.Validate(); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+`
		WHERE namespace = $1 AND integration = $2 AND handle = $3`,
		b.Namespace, b.Integration, b.Handle.String())
	if err != nil {
		return &custody.StoreError{Op: "delete", Err: err}
	}
	if tag.RowsAffected() == 0 {
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
	rows, err := s.pool.Query(ctx, `SELECT namespace, integration, handle FROM `+s.table+`
		WHERE namespace = $1 ORDER BY integration, handle`, namespace)
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
		return custody.Binding{}, fmt.Errorf("pgstore: corrupt row: %w", err)
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
