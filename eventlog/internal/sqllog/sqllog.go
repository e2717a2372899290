package sqllog

import (
	"context"
	"database/sql"
	"errors"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/sqlconn"
)

// Statements that both stores run as written.
const (
	// LastSeq reads the last seq of session $1, 0 when it is empty.
	LastSeq = `SELECT coalesce(max(seq), 0) FROM eventlog_events WHERE session = $1`
	// InsertEvent inserts the envelope row (session, seq, envelope, hash).
	InsertEvent = `INSERT INTO eventlog_events (session, seq, envelope, hash) VALUES ($1, $2, $3, $4)`
	// InsertContent inserts the content row (session, seq, data_key,
	// sealed).
	InsertContent = `INSERT INTO eventlog_content (session, seq, data_key, sealed) VALUES ($1, $2, $3, $4)`
	// DeleteContent deletes the content row of session $1, seq $2.
	DeleteContent = `DELETE FROM eventlog_content WHERE session = $1 AND seq = $2`
	// InsertShred records that the content of session $1, seq $2 was
	// deleted by the shred event at seq $3.
	InsertShred = `INSERT INTO eventlog_shreds (session, seq, shred_seq) VALUES ($1, $2, $3)`

	head = `SELECT seq, hash FROM eventlog_events WHERE session = $1 ORDER BY seq DESC LIMIT 1`
	read = `
		SELECT e.seq, e.envelope, e.hash, c.data_key, c.sealed, coalesce(s.shred_seq, 0)
		FROM eventlog_events e
		LEFT JOIN eventlog_content c ON c.session = e.session AND c.seq = e.seq
		LEFT JOIN eventlog_shreds s ON s.session = e.session AND s.seq = e.seq
		WHERE e.session = $1 AND e.seq >= $2 ORDER BY e.seq LIMIT $3`
)

// Head implements eventlog.Store.Head on q.
func Head(ctx context.Context, q sqlconn.Querier, session string) (eventlog.Head, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return eventlog.Head{}, err
	}
	var seq int64
	var hash []byte
	err := q.QueryRow(ctx, head, session).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return eventlog.Head{}, nil
	}
	if err != nil {
		return eventlog.Head{}, &eventlog.StoreError{Op: "head", Err: err}
	}
	return eventlog.Head{Seq: uint64(seq), Hash: eventlog.HashFromBytes(hash)}, nil
}

// Read implements eventlog.Store.Read on q.
func Read(ctx context.Context, q sqlconn.Querier, session string, from uint64, limit int) ([]eventlog.Record, error) {
	if err := eventlog.CheckSession(session); err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, read, session, int64(min(from, 1<<63-1)), limit)
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
func Shred(ctx context.Context, c sqlconn.Conn, session string, seq, expected uint64, shred eventlog.Record) error {
	var last int64
	if err := c.QueryRow(ctx, LastSeq, session).Scan(&last); err != nil {
		return err
	}
	if uint64(last) != expected {
		return eventlog.SeqConflict(session, expected, uint64(last))
	}
	n, err := c.Exec(ctx, DeleteContent, session, int64(seq))
	if err != nil {
		return err
	}
	if n != 1 {
		return eventlog.NothingToShred(session, seq)
	}
	if _, err := c.Exec(ctx, InsertShred, session, int64(seq), int64(shred.Seq)); err != nil {
		return err
	}
	_, err = c.Exec(ctx, InsertEvent, session, int64(shred.Seq), shred.Envelope, shred.Hash[:])
	return err
}

// The witness's statements: its state is one row per origin.
const (
	witnessed     = `SELECT size, hash, checkpoint FROM eventlog_witness WHERE origin = $1`
	witnessInsert = `INSERT INTO eventlog_witness (origin, size, hash, checkpoint) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`
	witnessUpdate = `UPDATE eventlog_witness SET size = $4, hash = $5, checkpoint = $6 WHERE origin = $1 AND size = $2 AND hash = $3`
)

// Witnessed implements eventlog.WitnessStore.Witnessed on q.
func Witnessed(ctx context.Context, q sqlconn.Querier, origin string) (eventlog.WitnessState, error) {
	var size int64
	var hash, checkpoint []byte
	err := q.QueryRow(ctx, witnessed, origin).Scan(&size, &hash, &checkpoint)
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
func Witness(ctx context.Context, c sqlconn.Conn, origin string, prev, next eventlog.WitnessState) error {
	var n int64
	var err error
	if prev.Size == 0 {
		n, err = c.Exec(ctx, witnessInsert, origin, int64(next.Size), next.Hash[:], next.Checkpoint)
	} else {
		n, err = c.Exec(ctx, witnessUpdate, origin, int64(prev.Size), prev.Hash[:], int64(next.Size), next.Hash[:], next.Checkpoint)
	}
	if err != nil {
		return &eventlog.StoreError{Op: "witness", Err: err}
	}
	if n != 1 {
		return eventlog.WitnessConflict(origin)
	}
	return nil
}
