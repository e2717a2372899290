package eventlog

import (
	"context"

	"github.com/checkfu/checkfu"
)

// A Record is one stored row of a session log: the encoded envelope, its
// chain hash, and the event's sealed content when the log keeps it.
// Stores keep records opaque: they never decode an envelope.
type Record struct {
	Seq      uint64
	Envelope []byte
	Hash     Hash
	// DataKey is the event's data key, wrapped under the log's key, and
	// Sealed its content sealed under the data key. Both are nil when the
	// event had no content, when the log is zero-data-retention, and after
	// the content was shredded.
	DataKey []byte
	Sealed  []byte
	// ShreddedBy is the seq of the shred event (kind [KindShred]) that
	// deleted this record's data key and sealed content, zero while they
	// are kept. A store sets it only in [Store.Shred]; verification refuses
	// sealed content that is missing without it.
	ShreddedBy uint64
}

// A Head names the last record of a session: its seq and chain hash. The
// head of an empty session is the zero Head.
type Head struct {
	Seq  uint64 `json:"seq"`
	Hash Hash   `json:"hash"`
}

// A SessionHead is one session a store holds and the head of its log:
// Head.Seq is also how many events the session holds.
type SessionHead struct {
	Session string `json:"session"`
	Head    Head   `json:"head"`
}

// MaxSessionsPage bounds the sessions one [SessionLister.Sessions] call
// returns.
const MaxSessionsPage = 1000

// A SessionLister is a [Store] that can list the sessions it holds, as
// the stores of this module (MemoryStore, sqlitelog, pglog) can. An
// operator's tool pages through them with after; a store that cannot
// list simply does not implement it.
type SessionLister interface {
	// Sessions returns at most limit sessions (at most MaxSessionsPage)
	// whose ids sort after after, in ascending byte order, each with its
	// head. A session with no events is not listed.
	Sessions(ctx context.Context, after string, limit int) ([]SessionHead, error)
}

// A Store keeps session logs durably. Implementations must be safe for
// concurrent use, and every handle on the same backing storage must see the
// same logs. [eventlogtest.TestStore] checks an implementation.
type Store interface {
	// Append stores recs as the next records of session if and only if
	// the session's last seq is expected, atomically: all of recs or none.
	// recs must be numbered expected+1, expected+2, ... in order. When the
	// last seq is not expected it returns a refusal with code
	// [CodeSeqConflict] and writes nothing. Append returns nil only once
	// the records are durable (committed and synced).
	Append(ctx context.Context, session string, expected uint64, recs []Record) error
	// Head returns the seq and hash of the session's last record.
	Head(ctx context.Context, session string) (Head, error)
	// Read returns at most limit records of session with seq >= from, in
	// ascending seq order, as stored (it does not verify them). It returns
	// fewer than limit only when the session holds no more: readers take
	// a short read as the end of the log.
	Read(ctx context.Context, session string, from uint64, limit int) ([]Record, error)
	// Wait returns nil once the session holds a record with seq >= seq,
	// or the context's error when ctx ends first.
	Wait(ctx context.Context, session string, seq uint64) error
	// Shred deletes the data key and sealed content of the record at seq,
	// marks that record as shredded by shred.Seq, and appends shred (the
	// shred event) as the next record if and only if the session's last
	// seq is expected, atomically and durably: all of it or none. The
	// envelope of seq stays. A stale expected is refused with
	// [CodeSeqConflict]; a seq without stored content, or already
	// shredded, is refused with [CodeContentMissing] and nothing is
	// written. [CheckShred] validates the arguments.
	Shred(ctx context.Context, session string, seq, expected uint64, shred Record) error
	// Close releases the handle.
	Close() error
}

// CheckAppend validates the arguments of [Store.Append] for store
// implementations: a valid session id and records numbered from
// expected+1 with no gaps, each with a non-empty envelope and a data key
// and sealed content that are both set or both nil.
func CheckAppend(session string, expected uint64, recs []Record) error {
	if err := CheckSession(session); err != nil {
		return err
	}
	if len(recs) == 0 {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: append of no records")
	}
	for i, r := range recs {
		if want := expected + uint64(i) + 1; r.Seq != want {
			return checkfu.Refuse(CodeEventInvalid, "eventlog: record %d of the append has seq %d, want %d", i, r.Seq, want)
		}
		if len(r.Envelope) == 0 {
			return checkfu.Refuse(CodeEventInvalid, "eventlog: record seq %d has no envelope", r.Seq)
		}
		if (r.DataKey == nil) != (r.Sealed == nil) {
			return checkfu.Refuse(CodeEventInvalid, "eventlog: record seq %d has a data key or sealed content without the other", r.Seq)
		}
		if r.ShreddedBy != 0 {
			return checkfu.Refuse(CodeEventInvalid, "eventlog: record seq %d is appended as shredded", r.Seq)
		}
	}
	return nil
}

// CheckShred validates the arguments of [Store.Shred] for store
// implementations: a valid session, a seq before the shred record, and a
// shred record that [CheckAppend] accepts after expected and that holds
// no content.
func CheckShred(session string, seq, expected uint64, shred Record) error {
	if err := CheckAppend(session, expected, []Record{shred}); err != nil {
		return err
	}
	if seq == 0 || seq > expected {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: shred of seq %d in a log at seq %d", seq, expected)
	}
	if shred.Sealed != nil {
		return checkfu.Refuse(CodeEventInvalid, "eventlog: a shred record holds content")
	}
	return nil
}

// NothingToShred returns the refusal a store gives a shred of a record
// that holds no content.
func NothingToShred(session string, seq uint64) error {
	return checkfu.Refuse(CodeContentMissing, "eventlog: session %s seq %d holds no content to shred", checkfu.Quote(session), seq)
}

// SeqConflict returns the refusal a store gives an append whose expected
// last seq is stale.
func SeqConflict(session string, expected, actual uint64) error {
	return checkfu.Refuse(CodeSeqConflict, "eventlog: session %s: expected last seq %d, but the log is at %d (another writer appended; re-read the head and retry)", checkfu.Quote(session), expected, actual)
}
