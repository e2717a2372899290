package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/sqlrecords"
	"github.com/checkfu/checkfu/internal/sqlconn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A Store is a custody.Store in one PostgreSQL schema. It is safe for
// concurrent use. A Store from [Open] owns its pool and Close closes it; a
// Store from [OpenPool] does not own the embedder's pool, and Close leaves
// it open.
//
// Its methods are those of custody.Store (Put, Get, CompareAndSwap,
// Delete, List), promoted from the implementation both SQL stores share.
// CompareAndSwap locks the row with SELECT ... FOR UPDATE.
type Store struct {
	*records
	pool  *pgxpool.Pool
	owned bool   // Close closes pool
	table string // quoted, schema-qualified table name
}

// records is the shared implementation of the custody.Store methods.
type records = sqlrecords.Store

var _ custody.Store = (*Store)(nil)

// DefaultSchema is the schema [Open] keeps its records in.
const DefaultSchema = "checkfu_custody"

// Open connects to the PostgreSQL database at dsn (a pgx connection
// string or URL) and returns a Store that keeps its records in the table
// custody_records of [DefaultSchema], creating both if needed. The Store
// owns the pool; Close closes it. An unparsable dsn is reported without
// its text, which may hold a password.
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			err = errors.New("pgstore: cannot parse the PostgreSQL DSN (check its syntax)")
		}
		return nil, &custody.StoreError{Op: "open", Err: err}
	}
	s, err := OpenPool(ctx, pool, DefaultSchema)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// OpenPool returns a Store over an embedder's pool that keeps its records
// in the table custody_records of schema, creating both if needed. schema
// must be 1 to 63 characters of a-z, 0-9 and _, starting with a letter or
// _. The Store does not own the pool: Close leaves it open.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, schema string) (*Store, error) {
	if !validSchema(schema) {
		return nil, &custody.StoreError{Op: "open", Err: fmt.Errorf("pgstore: schema %q is not a valid name (want 1-63 of a-z 0-9 _, not starting with a digit)", schema)}
	}
	if pool == nil {
		return nil, &custody.StoreError{Op: "open", Err: errors.New("pgstore: nil pool")}
	}
	s := &Store{pool: pool, table: pgx.Identifier{schema, "custody_records"}.Sanitize()}
	db := poolDB{conn{pool}, pool}
	s.records = sqlrecords.New(sqlrecords.Config{Name: "pgstore", Table: s.table, LockRow: " FOR UPDATE", Read: db, Write: db})
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

// Close closes the pool if the Store owns it (it came from [Open]), and
// otherwise does nothing. It always returns nil.
func (s *Store) Close() error {
	if s.owned {
		s.pool.Close()
	}
	return nil
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

// querier is what a pgx pool and a pgx transaction both offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// conn adapts a pgx pool or transaction to sqlconn.Conn.
type conn struct{ q querier }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlconn.Row {
	return c.q.QueryRow(ctx, query, args...)
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlconn.Rows, error) {
	return c.q.Query(ctx, query, args...)
}

// poolDB adapts a pgx pool to sqlrecords.DB.
type poolDB struct {
	conn
	pool *pgxpool.Pool
}

var _ sqlrecords.DB = poolDB{}

// InTx runs fn in a transaction of the pool: pgx.BeginFunc commits when
// fn returns nil and otherwise rolls back and returns fn's error.
func (d poolDB) InTx(ctx context.Context, fn func(sqlconn.Conn) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return fn(conn{tx}) })
}
