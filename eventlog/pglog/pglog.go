package pglog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/internal/sqllog"
	"github.com/checkfu/checkfu/internal/sqlconn"
)

// PollInterval is how often Wait re-reads the log when no notification
// arrives: the fallback for a listener that is (re)connecting.
const PollInterval = 250 * time.Millisecond

// notifyChannel is the LISTEN/NOTIFY channel every commit signals.
const notifyChannel = "checkfu_eventlog"

// A Store is an eventlog.Store in PostgreSQL. Build one with Open or
// OpenPool; the zero Store is not usable.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool // Open made the pool; Close closes it
	sql      *sqllog.SQL
	// appendEvents and appendContent are the batched unnest INSERTs of
	// Append, for the store's tables.
	appendEvents, appendContent string

	changes sqllog.Changes // notified on every commit seen

	mu        sync.Mutex
	listening bool // guarded by mu: the listener goroutine runs

	stop     context.Context // ends the listener
	stopFunc context.CancelFunc
	done     sync.WaitGroup // the listener
}

var (
	_ eventlog.Store         = (*Store)(nil)
	_ eventlog.WitnessStore  = (*Store)(nil)
	_ eventlog.SessionLister = (*Store)(nil)
)

// schemaDDL creates the tables, named with the prefix of sqllog.New.
const schemaDDL = `
CREATE TABLE IF NOT EXISTS {events} (
	session  text   NOT NULL,
	seq      bigint NOT NULL CHECK (seq > 0),
	envelope bytea  NOT NULL,
	hash     bytea  NOT NULL,
	PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS {content} (
	session  text   NOT NULL,
	seq      bigint NOT NULL,
	data_key bytea  NOT NULL,
	sealed   bytea  NOT NULL,
	PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS {shreds} (
	session   text   NOT NULL,
	seq       bigint NOT NULL,
	shred_seq bigint NOT NULL,
	PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS {witness} (
	origin     text   NOT NULL PRIMARY KEY,
	size       bigint NOT NULL,
	hash       bytea  NOT NULL,
	checkpoint bytea  NOT NULL
);
`

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and creates the tables when missing, in the connection's
// current schema (set search_path in the DSN to choose one). The Store
// owns its pool: Close closes it.
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, &eventlog.StoreError{Op: "open", Err: redact(err)}
	}
	s, err := newStore(ctx, pool, "")
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// OpenPool returns a Store over an embedder's pool that keeps its tables
// in schema, creating the schema and the tables when missing. schema must
// be 1 to 63 characters of a-z, 0-9 and _, not starting with a digit. The
// Store does not own the pool: Close leaves it open.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, schema string) (*Store, error) {
	if pool == nil {
		return nil, &eventlog.StoreError{Op: "open", Err: errors.New("pglog: nil pool")}
	}
	if !validSchema(schema) {
		return nil, &eventlog.StoreError{Op: "open", Err: fmt.Errorf("pglog: schema %s is not a valid name (want 1-63 of a-z 0-9 _, not starting with a digit)", checkfu.Quote(schema))}
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return nil, &eventlog.StoreError{Op: "open", Err: err}
	}
	return newStore(ctx, pool, pgx.Identifier{schema}.Sanitize()+".")
}

func newStore(ctx context.Context, pool *pgxpool.Pool, prefix string) (*Store, error) {
	r := sqllog.Tables(prefix)
	if _, err := pool.Exec(ctx, r.Replace(schemaDDL)); err != nil {
		return nil, &eventlog.StoreError{Op: "open", Err: redact(err)}
	}
	stop, stopFunc := context.WithCancel(context.Background())
	return &Store{
		pool: pool, sql: sqllog.New(prefix),
		appendEvents: r.Replace(`INSERT INTO {events} (session, seq, envelope, hash)
			SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::bytea[])`),
		appendContent: r.Replace(`INSERT INTO {content} (session, seq, data_key, sealed)
			SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::bytea[])`),
		stop: stop, stopFunc: stopFunc,
	}, nil
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

// listen holds one connection in LISTEN and signals on every
// notification, reconnecting after a failure, until Close.
func (s *Store) listen() {
	defer s.done.Done()
	for s.stop.Err() == nil {
		conn, err := pgx.ConnectConfig(s.stop, s.pool.Config().ConnConfig.Copy())
		if err == nil {
			if _, err = conn.Exec(s.stop, "LISTEN "+notifyChannel); err == nil {
				s.changes.Notify() // appends made before LISTEN took effect
			}
			for err == nil {
				if _, err = conn.WaitForNotification(s.stop); err == nil {
					s.changes.Notify()
				}
			}
			conn.Close(context.Background())
		}
		select {
		case <-s.stop.Done():
		case <-time.After(PollInterval):
		}
	}
}

// redact drops the connection string pgx may quote in a parse error: it
// can hold a password.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("cannot parse the PostgreSQL DSN (check its syntax)")
	}
	return err
}

// Append implements eventlog.Store.Append in one transaction.
func (s *Store) Append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) error {
	if err := eventlog.CheckAppend(session, expected, recs); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var last int64
		if err := tx.QueryRow(ctx, s.sql.LastSeq, session).Scan(&last); err != nil {
			return err
		}
		if uint64(last) != expected {
			return eventlog.SeqConflict(session, expected, uint64(last))
		}
		seqs := make([]int64, len(recs))
		envs := make([][]byte, len(recs))
		hashes := make([][]byte, len(recs))
		var cseqs []int64
		var keys, sealed [][]byte
		for i, r := range recs {
			seqs[i], envs[i], hashes[i] = int64(r.Seq), r.Envelope, r.Hash[:]
			if r.Sealed != nil {
				cseqs = append(cseqs, int64(r.Seq))
				keys = append(keys, r.DataKey)
				sealed = append(sealed, r.Sealed)
			}
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, notifyChannel); err != nil {
			return err // delivered to listeners only if the transaction commits
		}
		if _, err := tx.Exec(ctx, s.appendEvents, session, seqs, envs, hashes); err != nil {
			return err
		}
		if len(cseqs) > 0 {
			if _, err := tx.Exec(ctx, s.appendContent, session, cseqs, keys, sealed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.appendError(ctx, "append", session, expected, err)
	}
	s.changes.Notify()
	return nil
}

// Head implements eventlog.Store.Head.
func (s *Store) Head(ctx context.Context, session string) (eventlog.Head, error) {
	return s.sql.Head(ctx, querier{s.pool}, session)
}

// Sessions implements eventlog.SessionLister.Sessions.
func (s *Store) Sessions(ctx context.Context, after string, limit int) ([]eventlog.SessionHead, error) {
	return s.sql.Sessions(ctx, querier{s.pool}, after, limit)
}

// Read implements eventlog.Store.Read.
func (s *Store) Read(ctx context.Context, session string, from uint64, limit int) ([]eventlog.Record, error) {
	return s.sql.Read(ctx, querier{s.pool}, session, from, limit)
}

// Wait implements eventlog.Store.Wait: it wakes on this handle's commits
// and on commits anywhere else through LISTEN/NOTIFY, re-reading the head
// every PollInterval as a fallback.
func (s *Store) Wait(ctx context.Context, session string, seq uint64) error {
	s.mu.Lock()
	if !s.listening && s.stop.Err() == nil {
		s.listening = true
		s.done.Add(1)
		go s.listen()
	}
	s.mu.Unlock()
	return sqllog.Wait(ctx, &s.changes, PollInterval, s.Head, session, seq)
}

// Shred implements eventlog.Store.Shred in one transaction. The
// deleted row stays in PostgreSQL's files and WAL for a while; see
// docs/eventlog.md.
func (s *Store) Shred(ctx context.Context, session string, seq, expected uint64, shred eventlog.Record) error {
	if err := eventlog.CheckShred(session, seq, expected, shred); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, notifyChannel); err != nil {
			return err
		}
		return s.sql.Shred(ctx, txConn{tx}, session, seq, expected, shred)
	})
	if err != nil {
		return s.appendError(ctx, "shred", session, expected, err)
	}
	s.changes.Notify()
	return nil
}

// appendError maps the error of a transaction that appended after
// expected: a refusal as it is, a unique violation (another writer took
// the seq) as a seq conflict, anything else as a StoreError.
func (s *Store) appendError(ctx context.Context, op, session string, expected uint64, err error) error {
	if _, ok := checkfu.CodeOf(err); ok {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		head, herr := s.Head(ctx, session)
		if herr != nil {
			return &eventlog.StoreError{Op: op, Err: err}
		}
		return eventlog.SeqConflict(session, expected, head.Seq)
	}
	return &eventlog.StoreError{Op: op, Err: err}
}

// txConn adapts a pgx transaction to sqlconn.Conn.
type txConn struct{ tx pgx.Tx }

func (c txConn) QueryRow(ctx context.Context, query string, args ...any) sqlconn.Row {
	return c.tx.QueryRow(ctx, query, args...)
}

func (c txConn) Query(ctx context.Context, query string, args ...any) (sqlconn.Rows, error) {
	return c.tx.Query(ctx, query, args...)
}

func (c txConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

// Witnessed implements eventlog.WitnessStore.Witnessed.
func (s *Store) Witnessed(ctx context.Context, origin string) (eventlog.WitnessState, error) {
	return s.sql.Witnessed(ctx, querier{s.pool}, origin)
}

// Witness implements eventlog.WitnessStore.Witness in one statement.
func (s *Store) Witness(ctx context.Context, origin string, prev, next eventlog.WitnessState) error {
	return s.sql.Witness(ctx, querier{s.pool}, origin, prev, next)
}

// Close implements eventlog.Store.Close.
func (s *Store) Close() error {
	s.stopFunc()
	s.done.Wait()
	if s.ownsPool {
		s.pool.Close()
	}
	return nil
}

// querier adapts the pool to sqlconn.Conn.
type querier struct{ pool *pgxpool.Pool }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.pool.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlconn.Row {
	return q.pool.QueryRow(ctx, query, args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlconn.Rows, error) {
	return q.pool.Query(ctx, query, args...)
}
