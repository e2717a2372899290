package eventlog

import (
	"context"
	"crypto/hmac"
	"fmt"

	"github.com/checkfu/checkfu"
)

// readBatch is how many records one store read returns. A batch is held
// in memory with its sealed content, so it is sized for events at
// MaxContent: 128 of them are 128 MiB (4096 were 4 GiB).
const readBatch = 128

// A verifier checks records one at a time, in order, against the chain.
type verifier struct {
	session string
	next    uint64 // the seq the next record must have
	prev    Hash   // the hash the next record must link to
	first   uint64 // the first seq checked; 0 before the first record
	// shreds maps the seq of a shred event not reached yet to the seq of
	// the record whose content it deleted (that record's ShreddedBy).
	shreds map[uint64]uint64
	// keys, when set, check each shred event's tag against the chain
	// hash of the record it shredded, kept in targets by the shred
	// event's seq.
	keys    *Keys
	targets map[uint64]Hash
}

// check verifies r as the next record and returns its decoded envelope.
func (v *verifier) check(r *Record) (*envelope, error) {
	bad := func(seq uint64, format string, args ...any) error {
		return &ChainError{Session: v.session, Seq: seq, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case r.Seq > v.next:
		return nil, bad(v.next, "missing (the next stored event is seq %d)", r.Seq)
	case r.Seq < v.next:
		return nil, bad(r.Seq, "stored again or out of order after seq %d", v.next-1)
	}
	if chainHash(r.Envelope) != r.Hash {
		return nil, bad(r.Seq, "envelope does not match its hash (the event was changed)")
	}
	env, err := decodeEnvelope(r.Envelope)
	if err != nil {
		return nil, bad(r.Seq, "envelope does not decode: %v", err)
	}
	if env.session != v.session {
		return nil, bad(r.Seq, "envelope belongs to session %s (an event was moved between sessions)", checkfu.Quote(env.session))
	}
	if env.seq != r.Seq {
		return nil, bad(r.Seq, "envelope is seq %d (events were reordered or inserted)", env.seq)
	}
	if env.prev != v.prev {
		return nil, bad(r.Seq, "does not link to seq %d (an event before it was changed, removed or inserted)", r.Seq-1)
	}
	if err := v.checkContent(r, env, bad); err != nil {
		return nil, err
	}
	v.next++
	v.prev = r.Hash
	return env, nil
}

// checkContent checks what r stores of its content against env, and the
// shred bookkeeping: sealed content is either stored or deleted by a
// later shred event that r names (r.ShreddedBy), and a shred event is the
// one the record it names points back to.
func (v *verifier) checkContent(r *Record, env *envelope, bad func(uint64, string, ...any) error) error {
	if v.first == 0 {
		v.first = r.Seq
	}
	switch {
	case r.Sealed != nil || r.DataKey != nil:
		if env.mode != ContentSealed {
			return bad(r.Seq, "has stored content its envelope does not commit to")
		}
		if r.ShreddedBy != 0 {
			return bad(r.Seq, "is marked shredded by seq %d but still holds its content", r.ShreddedBy)
		}
		if sealedDigest(r.DataKey, r.Sealed) != env.sealed {
			return bad(r.Seq, "stored content does not match the envelope (the content was changed)")
		}
	case env.mode == ContentSealed:
		if r.ShreddedBy == 0 {
			return bad(r.Seq, "sealed content is missing and no shred event records its deletion (it was deleted outside Log.Shred)")
		}
		if r.ShreddedBy <= r.Seq {
			return bad(r.Seq, "is marked shredded by seq %d, which is not a later event", r.ShreddedBy)
		}
		if v.shreds == nil {
			v.shreds = map[uint64]uint64{}
		}
		if other, dup := v.shreds[r.ShreddedBy]; dup {
			return bad(r.Seq, "is marked shredded by seq %d, which seq %d names too", r.ShreddedBy, other)
		}
		v.shreds[r.ShreddedBy] = r.Seq
		if v.keys != nil {
			if v.targets == nil {
				v.targets = map[uint64]Hash{}
			}
			v.targets[r.ShreddedBy] = r.Hash
		}
	case r.ShreddedBy != 0:
		return bad(r.Seq, "is marked shredded by seq %d but had no sealed content", r.ShreddedBy)
	}
	target, named := v.shreds[r.Seq]
	targetHash := v.targets[r.Seq]
	delete(v.shreds, r.Seq)
	delete(v.targets, r.Seq)
	switch {
	case env.event.Kind == KindShred && named && target == env.shredOf && v.keys != nil &&
		!hmac.Equal(env.shredTag[:], hashBytes(v.keys.shredTag(v.session, target, targetHash))):
		return bad(target, "content was deleted; seq %d, which it names as its shred event, is not authenticated by the log's keys (someone who can write the store appended it)", r.Seq)
	case env.event.Kind == KindShred && named && target != env.shredOf:
		return bad(target, "content was deleted; seq %d, which it names as its shred event, shredded seq %d", r.Seq, env.shredOf)
	case env.event.Kind == KindShred && !named && env.shredOf >= v.first:
		return bad(r.Seq, "records the shred of seq %d, whose content is not marked shredded by it (the shred was undone)", env.shredOf)
	case env.event.Kind != KindShred && named:
		return bad(target, "content was deleted; seq %d, which it names as its shred event, is not a shred event", r.Seq)
	}
	return nil
}

// finish checks, at the end of what was read, that every shred event a
// record named was reached.
func (v *verifier) finish() error {
	var first, by uint64
	for m, n := range v.shreds {
		if first == 0 || n < first {
			first, by = n, m
		}
	}
	if first == 0 {
		return nil
	}
	return &ChainError{Session: v.session, Seq: first, Problem: fmt.Sprintf("content was deleted; the shred event it names, seq %d, is not in the log (the log ends at seq %d)", by, v.next-1)}
}

// hashBytes returns h as a slice, for hmac.Equal.
func hashBytes(h Hash) []byte { return h[:] }

// Verify is the package [Verify] with the log's keys: when the log has
// [Keys], each shred event must also carry the tag only a holder of the
// keys can make, over the record it shredded. A shred event appended by
// someone who can write the store but holds no keys is a [*ChainError]
// at the seq whose content it claims to have shredded.
func (l *Log) Verify(ctx context.Context, session string) (Head, error) {
	if err := l.usable(); err != nil {
		return Head{}, err
	}
	return verify(ctx, l.store, session, l.keys)
}

// Verify reads every record of session from seq 1 and checks the chain:
// each envelope matches its hash, decodes, names its own session and seq,
// and links to the hash of the event before it; stored content matches
// what its envelope commits to; and sealed content that is gone was
// deleted by a shred event of the log that names it. It returns the verified head, or a
// [*ChainError] naming the first bad seq.
//
// The chain proves the log consistent with itself. Truncating the newest
// events, or rewriting the log from some seq on with freshly computed
// hashes, is caught only against a head recorded elsewhere: pass it to
// [VerifyHead].
//
// Verify holds no keys, so it cannot tell a shred event [Log.Shred]
// appended from one that someone who can write the store appended
// with the content row's deletion; [Log.Verify] can.
func Verify(ctx context.Context, store Store, session string) (Head, error) {
	return verify(ctx, store, session, nil)
}

// verify is [Verify], checking shred events' tags when keys is not nil.
func verify(ctx context.Context, store Store, session string, keys *Keys) (Head, error) {
	if store == nil {
		return Head{}, errStoreMissing
	}
	if err := CheckSession(session); err != nil {
		return Head{}, err
	}
	v := verifier{session: session, next: 1, keys: keys}
	for {
		recs, err := store.Read(ctx, session, v.next, readBatch)
		if err != nil {
			return Head{}, err
		}
		for i := range recs {
			if _, err := v.check(&recs[i]); err != nil {
				return Head{}, err
			}
		}
		if len(recs) < readBatch {
			if err := v.finish(); err != nil {
				return Head{}, err
			}
			return Head{Seq: v.next - 1, Hash: v.prev}, nil
		}
	}
}

// VerifyHead verifies session like [Verify] and also checks that it still
// holds want, a head recorded earlier (by a writer, a receipt or an
// auditor): the event at want.Seq must exist and have hash want.Hash.
func VerifyHead(ctx context.Context, store Store, session string, want Head) (Head, error) {
	head, err := Verify(ctx, store, session)
	if err != nil || want.Seq == 0 {
		return head, err
	}
	if head.Seq < want.Seq {
		return head, &ChainError{Session: session, Seq: head.Seq + 1, Problem: fmt.Sprintf("missing: the log ends at seq %d but a recorded head is at seq %d (events were truncated)", head.Seq, want.Seq)}
	}
	recs, err := store.Read(ctx, session, want.Seq, 1)
	if err != nil {
		return head, err
	}
	if len(recs) != 1 || recs[0].Hash != want.Hash {
		return head, &ChainError{Session: session, Seq: want.Seq, Problem: "does not match the recorded head (the log was rewritten)"}
	}
	return head, nil
}
