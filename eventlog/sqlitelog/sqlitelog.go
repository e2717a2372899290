package sqlitelog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/internal/sqllog"
	"github.com/checkfu/checkfu/internal/sqlconn"
	"github.com/checkfu/checkfu/internal/sqliteutil"
)

// PollInterval is how often Wait re-reads the log for appends made by
// other processes.
const PollInterval = 20 * time.Millisecond

// A Store is an eventlog.Store in one SQLite file. Build one with Open;
// the zero Store is not usable.
type Store struct {
	db     *sql.DB
	reader sqlconn.Querier // db, for sqllog

	wmu sync.Mutex // serialises writers of this handle

	changes sqllog.Changes // notified on every commit of this handle
}

var (
	_ eventlog.Store         = (*Store)(nil)
	_ eventlog.WitnessStore  = (*Store)(nil)
	_ eventlog.SessionLister = (*Store)(nil)
)

// busyTimeout is how long a writer waits for another process's lock.
const busyTimeout = 5 * time.Second

// dsn returns the data source name Open uses for path.
func dsn(path string) string {
	u := url.URL{Scheme: "file", Opaque: path}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "secure_delete(ON)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_txlock", "immediate")
	return u.String() + "?" + q.Encode()
}

const schema = `
CREATE TABLE IF NOT EXISTS eventlog_events (
	session  TEXT    NOT NULL,
	seq      INTEGER NOT NULL CHECK (seq > 0),
	envelope BLOB    NOT NULL,
	hash     BLOB    NOT NULL,
	PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS eventlog_content (
	session  TEXT    NOT NULL,
	seq      INTEGER NOT NULL,
	data_key BLOB    NOT NULL,
	sealed   BLOB    NOT NULL,
	PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS eventlog_shreds (
	session   TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	shred_seq INTEGER NOT NULL,
	PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS eventlog_witness (
	origin     TEXT    NOT NULL PRIMARY KEY,
	size       INTEGER NOT NULL,
	hash       BLOB    NOT NULL,
	checkpoint BLOB    NOT NULL
) WITHOUT ROWID;
`

// Open opens (creating when missing) the log database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, &eventlog.StoreError{Op: "open", Err: errors.New("empty SQLite path")}
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, &eventlog.StoreError{Op: "open", Err: err}
	}
	db.SetMaxOpenConns(4)
	if err := sqliteutil.CreateSchema(ctx, db, schema, busyTimeout); err != nil {
		db.Close()
		return nil, &eventlog.StoreError{Op: "open", Err: fmt.Errorf("%s: %w", path, err)}
	}
	return &Store{db: db, reader: sqlconn.SQL(db)}, nil
}

// Append implements eventlog.Store.Append in one IMMEDIATE transaction.
func (s *Store) Append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) error {
	if err := eventlog.CheckAppend(session, expected, recs); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.append(ctx, session, expected, recs)
	if err == nil {
		s.changes.Notify()
	}
	return err
}

func (s *Store) append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return &eventlog.StoreError{Op: "append", Err: err}
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var last uint64
	if err := tx.QueryRowContext(ctx, sqllog.Unqualified.LastSeq, session).Scan(&last); err != nil {
		return &eventlog.StoreError{Op: "append", Err: err}
	}
	if last != expected {
		return eventlog.SeqConflict(session, expected, last)
	}
	ins, err := tx.PrepareContext(ctx, sqllog.Unqualified.InsertEvent)
	if err != nil {
		return &eventlog.StoreError{Op: "append", Err: err}
	}
	defer ins.Close()
	var insContent *sql.Stmt
	for _, r := range recs {
		if _, err := ins.ExecContext(ctx, session, int64(r.Seq), r.Envelope, r.Hash[:]); err != nil {
			return &eventlog.StoreError{Op: "append", Err: err}
		}
		if r.Sealed == nil {
			continue
		}
		if insContent == nil {
			if insContent, err = tx.PrepareContext(ctx, sqllog.Unqualified.InsertContent); err != nil {
				return &eventlog.StoreError{Op: "append", Err: err}
			}
			defer insContent.Close()
		}
		if _, err := insContent.ExecContext(ctx, session, int64(r.Seq), r.DataKey, r.Sealed); err != nil {
			return &eventlog.StoreError{Op: "append", Err: err}
		}
	}
	if err := tx.Commit(); err != nil {
		return &eventlog.StoreError{Op: "append", Err: err}
	}
	return nil
}

// Head implements eventlog.Store.Head.
func (s *Store) Head(ctx context.Context, session string) (eventlog.Head, error) {
	return sqllog.Unqualified.Head(ctx, s.reader, session)
}

// Sessions implements eventlog.SessionLister.Sessions.
func (s *Store) Sessions(ctx context.Context, after string, limit int) ([]eventlog.SessionHead, error) {
	return sqllog.Unqualified.Sessions(ctx, s.reader, after, limit)
}

// Read implements eventlog.Store.Read.
func (s *Store) Read(ctx context.Context, session string, from uint64, limit int) ([]eventlog.Record, error) {
	return sqllog.Unqualified.Read(ctx, s.reader, session, from, limit)
}

// Wait implements eventlog.Store.Wait: it wakes on this handle's commits
// at once and polls every PollInterval for other writers.
func (s *Store) Wait(ctx context.Context, session string, seq uint64) error {
	return sqllog.Wait(ctx, &s.changes, PollInterval, s.Head, session, seq)
}

// Shred implements eventlog.Store.Shred in one IMMEDIATE transaction,
// then truncates the WAL so that no copy of the content row stays in the
// files.
func (s *Store) Shred(ctx context.Context, session string, seq, expected uint64, shred eventlog.Record) error {
	if err := eventlog.CheckShred(session, seq, expected, shred); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.shred(ctx, session, seq, expected, shred); err != nil {
		return err
	}
	s.changes.Notify()
	// TRUNCATE waits (busy_timeout) for readers on older snapshots, then
	// empties the WAL, so the old frames holding the row are gone.
	var busy, logFrames, checkpointed int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed); err != nil {
		return &eventlog.StoreError{Op: "shred", Err: err}
	}
	if busy != 0 {
		return &eventlog.StoreError{Op: "shred", Err: errors.New("the content row is deleted, but readers kept the WAL from being truncated; run PRAGMA wal_checkpoint(TRUNCATE) to remove the old WAL frames")}
	}
	return nil
}

func (s *Store) shred(ctx context.Context, session string, seq, expected uint64, shred eventlog.Record) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return &eventlog.StoreError{Op: "shred", Err: err}
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := sqllog.Unqualified.Shred(ctx, sqlconn.SQL(tx), session, seq, expected, shred); err != nil {
		if _, ok := checkfu.CodeOf(err); ok {
			return err
		}
		return &eventlog.StoreError{Op: "shred", Err: err}
	}
	if err := tx.Commit(); err != nil {
		return &eventlog.StoreError{Op: "shred", Err: err}
	}
	return nil
}

// Witnessed implements eventlog.WitnessStore.Witnessed.
func (s *Store) Witnessed(ctx context.Context, origin string) (eventlog.WitnessState, error) {
	return sqllog.Unqualified.Witnessed(ctx, s.reader, origin)
}

// Witness implements eventlog.WitnessStore.Witness in one statement.
func (s *Store) Witness(ctx context.Context, origin string, prev, next eventlog.WitnessState) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return sqllog.Unqualified.Witness(ctx, sqlconn.SQL(s.db), origin, prev, next)
}

// Close implements eventlog.Store.Close.
func (s *Store) Close() error { return s.db.Close() }
