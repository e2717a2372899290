package eventlog

import (
	"context"
	"fmt"
	"iter"

	"github.com/checkfu/checkfu"
)

// An Entry is one event as read back from a log: its envelope fields and
// where it sits in the chain. Entry.Event.Content is always nil; read the
// content itself with [Log.Content].
type Entry struct {
	Session string
	Seq     uint64
	Hash    Hash
	Prev    Hash
	Event
	// ContentMode says what the log kept of the event's content.
	ContentMode ContentMode
	// ContentDigest is the keyed digest (HMAC-SHA256 under the log's
	// digest key) of the content; zero when there was none.
	ContentDigest Hash
	// Shredded reports whether sealed content was deleted (by [Log.Shred]).
	Shredded bool
	// ShredOf is, for an event of kind [KindShred], the seq of the event
	// whose content it shredded; zero for every other kind.
	ShredOf uint64
}

func entryOf(r *Record, env *envelope) Entry {
	return Entry{
		Session: env.session, Seq: env.seq, Hash: r.Hash, Prev: env.prev, Event: env.event,
		ContentMode: env.mode, ContentDigest: env.mac,
		Shredded: env.mode == ContentSealed && r.Sealed == nil, ShredOf: env.shredOf,
	}
}

// Read yields the events of session with seq >= from (from 0 means 1), in
// order, and stops at the current end of the log. Each record is checked
// against its own hash and linked to the one before it; the first record
// that fails ends the sequence with a [*ChainError]. Records before from
// are not verified: use [Verify] for the whole chain.
func (l *Log) Read(ctx context.Context, session string, from uint64) iter.Seq2[Entry, error] {
	return l.read(ctx, session, from, false)
}

// Follow is [Log.Read] that does not stop at the end of the log: it waits
// for writers to append and yields their events as they become durable,
// until ctx ends (it then yields ctx's error once).
func (l *Log) Follow(ctx context.Context, session string, from uint64) iter.Seq2[Entry, error] {
	return l.read(ctx, session, from, true)
}

func (l *Log) read(ctx context.Context, session string, from uint64, follow bool) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		v, err := l.startAt(ctx, session, from, follow)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		if v == nil {
			return // Read from beyond the end of the log
		}
		for {
			recs, err := l.store.Read(ctx, session, v.next, readBatch)
			if err != nil {
				yield(Entry{}, err)
				return
			}
			for i := range recs {
				env, err := v.check(&recs[i])
				if err != nil {
					yield(Entry{}, err)
					return
				}
				if !yield(entryOf(&recs[i], env), nil) {
					return
				}
			}
			if len(recs) == readBatch {
				continue
			}
			if err := v.finish(); err != nil {
				yield(Entry{}, err)
				return
			}
			if !follow {
				return
			}
			if err := l.store.Wait(ctx, session, v.next); err != nil {
				yield(Entry{}, err)
				return
			}
		}
	}
}

// startAt returns a verifier positioned at from, trusting the stored hash
// of seq from-1 once it matches that record's envelope. It returns nil
// when the log ends before from-1 and follow is false.
func (l *Log) startAt(ctx context.Context, session string, from uint64, follow bool) (*verifier, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	v := &verifier{session: session, next: 1, keys: l.keys}
	if from <= 1 {
		return v, nil
	}
	recs, err := l.store.Read(ctx, session, from-1, 1)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 && !follow {
		return nil, nil // nothing at or after from-1: nothing to read
	}
	if len(recs) == 0 || recs[0].Seq != from-1 {
		return l.skipTo(ctx, session, from, follow)
	}
	v.next = from - 1
	if _, err := v.checkAlone(&recs[0]); err != nil {
		return nil, err
	}
	return v, nil
}

// skipTo returns a verifier at from for a log that does not hold from-1:
// it checks the records that exist from seq 1 and, when following, waits
// for the rest. Without follow it returns nil at the end of the log.
func (l *Log) skipTo(ctx context.Context, session string, from uint64, follow bool) (*verifier, error) {
	v := &verifier{session: session, next: 1, keys: l.keys}
	for v.next < from {
		recs, err := l.store.Read(ctx, session, v.next, int(min(readBatch, from-v.next)))
		if err != nil {
			return nil, err
		}
		for i := range recs {
			if _, err := v.check(&recs[i]); err != nil {
				return nil, err
			}
		}
		if len(recs) == 0 {
			if !follow {
				return nil, nil
			}
			if err := l.store.Wait(ctx, session, v.next); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// Content returns the content of the event at seq, opened with the log's
// keys and checked against the envelope's keyed digest. It refuses with
// [CodeContentMissing], [CodeContentNotRetained] or [CodeContentShredded] when
// there is nothing to return, and with [CodeChainBroken] when the record
// does not match its envelope.
func (l *Log) Content(ctx context.Context, session string, seq uint64) ([]byte, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	recs, err := l.store.Read(ctx, session, seq, 1)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || recs[0].Seq != seq {
		return nil, checkfu.Refuse(CodeEventNotFound, "eventlog: session %s has no seq %d", checkfu.Quote(session), seq)
	}
	r := &recs[0]
	v := verifier{session: session, next: seq}
	env, err := v.checkAlone(r)
	if err != nil {
		return nil, err
	}
	switch {
	case env.mode == ContentNone:
		return nil, checkfu.Refuse(CodeContentMissing, "eventlog: session %s seq %d has no content", checkfu.Quote(session), seq)
	case env.mode == ContentDigestOnly:
		return nil, checkfu.Refuse(CodeContentNotRetained, "eventlog: session %s seq %d was logged with zero data retention: only a keyed digest of its content exists", checkfu.Quote(session), seq)
	case r.Sealed == nil:
		if err := l.checkShredded(ctx, session, r); err != nil {
			return nil, err
		}
		return nil, checkfu.Refuse(CodeContentShredded, "eventlog: session %s seq %d: content was shredded by seq %d", checkfu.Quote(session), seq, r.ShreddedBy)
	case l.keys == nil:
		return nil, checkfu.Refuse(CodeContentKeyMissing, "eventlog: the log has no keys to open content (configure Options.Keys)")
	}
	content, err := l.keys.open(session, env.mac, r.DataKey, r.Sealed)
	if err != nil {
		return nil, &ChainError{Session: session, Seq: seq, Problem: "content does not open under the log's keys: " + err.Error()}
	}
	return content, nil
}

// checkShredded checks that the shred event r names exists and records
// the shred of r: sealed content deleted by any other means is a
// [*ChainError], not a shred.
func (l *Log) checkShredded(ctx context.Context, session string, r *Record) error {
	recs, err := l.store.Read(ctx, session, r.ShreddedBy, 1)
	if err != nil {
		return err
	}
	if len(recs) == 0 || recs[0].Seq != r.ShreddedBy {
		return &ChainError{Session: session, Seq: r.Seq, Problem: fmt.Sprintf("content was deleted; the shred event it names, seq %d, is not in the log", r.ShreddedBy)}
	}
	v := verifier{session: session, next: r.ShreddedBy, first: r.Seq, shreds: map[uint64]uint64{r.ShreddedBy: r.Seq},
		keys: l.keys, targets: map[uint64]Hash{r.ShreddedBy: r.Hash}}
	_, err = v.checkAlone(&recs[0])
	return err
}

// checkAlone checks r against its own hash and shape, without its link to
// the record before it.
func (v *verifier) checkAlone(r *Record) (*envelope, error) {
	env, err := decodeEnvelope(r.Envelope)
	if err != nil || chainHash(r.Envelope) != r.Hash {
		return nil, &ChainError{Session: v.session, Seq: r.Seq, Problem: "envelope does not match its hash or does not decode"}
	}
	v.prev = env.prev
	return v.check(r)
}
