package sqliteutil

import "database/sql"

// Rows is a *sql.Rows whose Close returns nothing, as pgx.Rows' does: the
// form the stores' shared SQL code reads rows in. Readers take the
// errors of a read from Err, after Next returns false.
type Rows struct{ *sql.Rows }

// Close closes the rows, dropping the error (*sql.Rows).Close returns,
// as a deferred Close does.
func (r Rows) Close() { r.Rows.Close() }
