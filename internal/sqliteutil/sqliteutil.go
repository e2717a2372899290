// Package sqliteutil holds what the SQLite stores of custody and eventlog
// share about opening a database file that several processes may create
// at the same moment.
package sqliteutil

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"modernc.org/sqlite"
)

// sqliteBusy is SQLite's primary result code SQLITE_BUSY; extended codes
// (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, ...) share its low byte.
const sqliteBusy = 5

// IsBusy reports whether err is SQLite's SQLITE_BUSY or one of its
// extended forms.
func IsBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqliteBusy
}

// CreateSchema runs schema in one transaction of db, whose DSN must set
// _txlock=immediate so that the transaction takes the write lock first.
//
// When several processes open the same new file together, SQLite can
// answer SQLITE_BUSY at once, without waiting out the busy timeout: while
// the connection's opening pragmas switch the file to WAL, and when two
// autocommit statements each hold a read lock and ask for the write lock.
// CreateSchema therefore retries on SQLITE_BUSY, with a growing pause,
// until timeout has passed or ctx is done; any other error is returned at
// once.
func CreateSchema(ctx context.Context, db *sql.DB, schema string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := createOnce(ctx, db, schema)
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func createOnce(ctx context.Context, db *sql.DB, schema string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
