package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/sqlconn"
)

// SQL holds the statements both stores run as written, for the tables of
// one schema. Build it with [New].
type SQL struct {
	// LastSeq reads the last seq of session $1, 0 when it is empty.
	LastSeq string
	// InsertEvent inserts the envelope row (session, seq, envelope, hash).
	InsertEvent string
	// InsertContent inserts the content row (session, seq, data_key,
	// sealed).
	InsertContent string
	// DeleteContent deletes the content row of session $1, seq $2.
	DeleteContent string
	// InsertShred records that the content of session $1, seq $2 was
	// deleted by the shred event at seq $3.
	InsertShred string

	head, read, sessions                    string
	witnessed, witnessInsert, witnessUpdate string
}

// Unqualified is the SQL of the tables the connection's search path
// finds: SQLite's, and PostgreSQL's when the DSN chooses the schema.
var Unqualified = New("")

// Tables returns a replacer of {events}, {content}, {shreds} and
// {witness} in a statement by the names of those tables under prefix.
func Tables(prefix string) *strings.Replacer {
	return strings.NewReplacer("{events}", prefix+"eventlog_events", "{content}", prefix+"eventlog_content",
		"{shreds}", prefix+"eventlog_shreds", "{witness}", prefix+"eventlog_witness")
}

// New returns the statements for the tables named prefix+"eventlog_...":
// prefix is "" or a quoted schema name and a dot.
func New(prefix string) *SQL {
	r := Tables(prefix)
	return &SQL{
		LastSeq:       r.Replace(`SELECT coalesce(max(seq), 0) FROM {events} WHERE session = $1`),
		InsertEvent:   r.Replace(`INSERT INTO {events} (session, seq, envelope, hash) VALUES ($1, $2, $3, $4)`),
		InsertContent: r.Replace(`INSERT INTO {content} (session, seq, data_key, sealed) VALUES ($1, $2, $3, $4)`),
		DeleteContent: r.Replace(`DELETE FROM {content} WHERE session = $1 AND seq = $2`),
		InsertShred:   r.Replace(`INSERT INTO {shreds} (session, seq, shred_seq) VALUES ($1, $2, $3)`),
		head:          r.Replace(`SELECT seq, hash FROM {events} WHERE session = $1 ORDER BY seq DESC LIMIT 1`),
		sessions: r.Replace(`
		SELECT e.session, e.seq, e.hash FROM {events} e
		JOIN (SELECT session, max(seq) AS seq FROM {events} WHERE session > $1 GROUP BY session ORDER BY session LIMIT $2) m
		ON m.session = e.session AND m.seq = e.seq ORDER BY e.session`),
		read: r.Replace(`
		SELECT e.seq, e.envelope, e.hash, c.data_key, c.sealed, coalesce(s.shred_seq, 0)
		FROM {events} e
		LEFT JOIN {content} c ON c.session = e.session AND c.seq = e.seq
		LEFT JOIN {shreds} s ON s.session = e.session AND s.seq = e.seq
		WHERE e.session = $1 AND e.seq >= $2 ORDER BY e.seq LIMIT $3`),
		witnessed:     r.Replace(`SELECT size, hash, checkpoint FROM {witness} WHERE origin = $1`),
		witnessInsert: r.Replace(`INSERT INTO {witness} (origin, size, hash, checkpoint) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`),
		witnessUpdate: r.Replace(`UPDATE {witness} SET size = $4, hash = $5, checkpoint = $6 WHERE origin = $1 AND size = $2 AND hash = $3`),
	}
}

// Head implements eventlog.Store.Head on q.
func (st *SQL) Head(ctx context.Context, q sqlconn.Querier, session string) (eventlog.Head, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return eventlog.Head{}, err
	}
	var seq int64
	var hash []byte
	err := q.QueryRow(ctx, st.head, session).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return eventlog.Head{}, nil
	}
	if err != nil {
		return eventlog.Head{}, &eventlog.StoreError{Op: "head", Err: err}
	}
	return eventlog.Head{Seq: uint64(seq), Hash: eventlog.HashFromBytes(hash)}, nil
}

// Sessions implements eventlog.SessionLister.Sessions on q.
func (st *SQL) Sessions(ctx context.Context, q sqlconn.Querier, after string, limit int) ([]eventlog.SessionHead, error) {
	limit = min(limit, eventlog.MaxSessionsPage)
	if limit <= 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, st.sessions, after, limit)
	if err != nil {
		return nil, &eventlog.StoreError{Op: "sessions", Err: err}
	}
	defer rows.Close()
	var out []eventlog.SessionHead
	for rows.Next() {
		var session string
		var seq int64
		var hash []byte
		if err := rows.Scan(&session, &seq, &hash); err != nil {
			return nil, &eventlog.StoreError{Op: "sessions", Err: err}
		}
		out = append(out, eventlog.SessionHead{Session: session, Head: eventlog.Head{Seq: uint64(seq), Hash: eventlog.HashFromBytes(hash)}})
	}
	if err := rows.Err(); err != nil {
		return nil, &eventlog.StoreError{Op: "sessions", Err: err}
	}
	return out, nil
}

// Read implements eventlog.Store.Read on q.
func (st *SQL) Read(ctx context.Context, q sqlconn.Querier, session string, from uint64, limit int) ([]eventlog.Record, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, st.read, session, int64(min(from, 1<<63-1)), limit)
	if err != nil {
		return nil, &eventlog.StoreError{Op: "read", Err: err}
	}
	defer rows.Close()
	var out []eventlog.Record
	// One destination slice for every row: passed through an interface,
	// a fresh one per row would be a heap allocation per row. Both
	// drivers scan a []byte into a fresh slice (nil for NULL), so the
	// record can keep what the variables hold.
	var seq, shredSeq int64
	var env, hash, key, sealed []byte
	dest := []any{&seq, &env, &hash, &key, &sealed, &shredSeq}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, &eventlog.StoreError{Op: "read", Err: err}
		}
		out = append(out, eventlog.Record{Seq: uint64(seq), Envelope: env, Hash: eventlog.HashFromBytes(hash), DataKey: key, Sealed: sealed, ShreddedBy: uint64(shredSeq)})
	}
	if err := rows.Err(); err != nil {
		return nil, &eventlog.StoreError{Op: "read", Err: err}
	}
	return out, nil
}

// Shred runs the statements of eventlog.Store.Shred on c, which must be a
// transaction: the conditional append of the shred record, the deletion
// of the content row and the row that records it. The caller commits.
func (st *SQL) Shred(ctx context.Context, c sqlconn.Conn, session string, seq, expected uint64, shred eventlog.Record) error {
	var last int64
	if err := c.QueryRow(ctx, st.LastSeq, session).Scan(&last); err != nil {
		return err
	}
	if uint64(last) != expected {
		return eventlog.SeqConflict(session, expected, uint64(last))
	}
	n, err := c.Exec(ctx, st.DeleteContent, session, int64(seq))
	if err != nil {
		return err
	}
	if n != 1 {
		return eventlog.NothingToShred(session, seq)
	}
	if _, err := c.Exec(ctx, st.InsertShred, session, int64(seq), int64(shred.Seq)); err != nil {
		return err
	}
	_, err = c.Exec(ctx, st.InsertEvent, session, int64(shred.Seq), shred.Envelope, shred.Hash[:])
	return err
}

// Witnessed implements eventlog.WitnessStore.Witnessed on q.
func (st *SQL) Witnessed(ctx context.Context, q sqlconn.Querier, origin string) (eventlog.WitnessState, error) {
	var size int64
	var hash, checkpoint []byte
	err := q.QueryRow(ctx, st.witnessed, origin).Scan(&size, &hash, &checkpoint)
	if errors.Is(err, sql.ErrNoRows) {
		return eventlog.WitnessState{}, nil
	}
	if err != nil {
		return eventlog.WitnessState{}, &eventlog.StoreError{Op: "witnessed", Err: err}
	}
	return eventlog.WitnessState{Size: uint64(size), Hash: eventlog.HashFromBytes(hash), Checkpoint: checkpoint}, nil
}

// Witness implements eventlog.WitnessStore.Witness on c with one
// statement: an insert when prev is the zero state, else an update
// conditional on prev.
func (st *SQL) Witness(ctx context.Context, c sqlconn.Conn, origin string, prev, next eventlog.WitnessState) error {
	var n int64
	var err error
	if prev.Size == 0 {
		n, err = c.Exec(ctx, st.witnessInsert, origin, int64(next.Size), next.Hash[:], next.Checkpoint)
	} else {
		n, err = c.Exec(ctx, st.witnessUpdate, origin, int64(prev.Size), prev.Hash[:], int64(next.Size), next.Hash[:], next.Checkpoint)
	}
	if err != nil {
		return &eventlog.StoreError{Op: "witness", Err: err}
	}
	if n != 1 {
		return eventlog.WitnessConflict(origin)
	}
	return nil
}
