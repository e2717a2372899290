// Package sqlconn is the driver-neutral view of a SQL connection through
// which the module's SQL stores share code: custody's pgstore and
// sqlitestore, eventlog's pglog and sqlitelog. pgx values (pgx.Row,
// pgx.Rows) fit its Row and Rows as they are; database/sql values go
// through SQL. A PostgreSQL store adapts its pgx pool in a few lines of
// its own, so that this package, and every SQLite store, never imports
// pgx.
//
// Invariants:
//
//   - A Row's Scan returns an error matching sql.ErrNoRows when there is
//     no row, for both drivers (pgx.ErrNoRows matches it).
//   - On error, the Rows that Query returns must not be used.
package sqlconn
