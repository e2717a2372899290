package sqlconn

import (
	"context"
	"database/sql"
)

// A Row is the result of a query for at most one row; pgx.Row and
// *sql.Row are Rows.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of a query, read row by row; pgx.Rows is one.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// A Querier runs queries on a connection pool or in one transaction.
type Querier interface {
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// A Conn is a Querier that also runs statements.
type Conn interface {
	Querier
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
}

// SQLQuerier is what a *sql.DB and a *sql.Tx both offer.
type SQLQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// SQL adapts a *sql.DB or a *sql.Tx to Conn.
func SQL(q SQLQuerier) Conn { return sqlConn{q} }

type sqlConn struct{ q SQLQuerier }

func (c sqlConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c sqlConn) QueryRow(ctx context.Context, query string, args ...any) Row {
	return c.q.QueryRowContext(ctx, query, args...)
}

func (c sqlConn) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows is a *sql.Rows whose Close returns nothing, as pgx.Rows' does.
// Readers take the errors of a read from Err, after Next returns false.
type sqlRows struct{ *sql.Rows }

// Close closes the rows, dropping the error (*sql.Rows).Close returns,
// as a deferred Close does.
func (r sqlRows) Close() { r.Rows.Close() }
