package eventlog

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// Options configure a [Log]. The zero Options give a log that refuses
// events carrying content.
type Options struct {
	// Keys seal each event's content under its own data key and compute
	// its keyed digest. Without Keys, an event with content is refused
	// with [CodeContentKeyMissing].
	Keys *Keys
	// ZeroDataRetention keeps content out of every durable sink: the
	// envelope records only the keyed digest of the content (Keys are
	// still required for that digest) and no sealed content is stored.
	ZeroDataRetention bool
	// Now returns the time stamped on events that have none; time.Now
	// when nil.
	Now func() time.Time
	// Signer signs the checkpoints [Log.Checkpoint] returns (an Ed25519
	// note signer, as note.NewSigner returns). The origin of a session's
	// checkpoints is the signer's name, "/" and the session id. Without a
	// Signer, Checkpoint is refused with [CodeCheckpointSignerMissing].
	Signer note.Signer
	// Witness, when set, receives every checkpoint [Log.Checkpoint]
	// signs, and must accept it for Checkpoint to succeed.
	Witness Witness
	// MeterProvider gives the log's instrument, checkfu.log.appends
	// (events appended and durable). Nil records nothing.
	MeterProvider metric.MeterProvider
}

// A Log appends events to, and reads them from, the session logs of one
// [Store]. It assigns seqs, builds the hash chain and seals content. A Log
// is safe for concurrent use; concurrent [Log.Append] calls for the same
// session are committed together in one store transaction (group commit).
// The zero Log is not usable: build one with [New].
type Log struct {
	store Store
	keys  *Keys
	zdr   bool
	now   func() time.Time

	signer  note.Signer
	witness Witness
	meters  *telemetry.LogMetrics

	mu     sync.Mutex
	queues map[string]*queue // guarded by mu; only sessions with appends in flight
}

// A queue holds the appends waiting for one session's group commit.
type queue struct {
	waiting []*pending // guarded by Log.mu
	leading bool       // guarded by Log.mu: a goroutine is committing
	// head is the last head this process committed or read; only the
	// leading goroutine touches it.
	head  Head
	known bool
}

// A pending append: the event with its content already sealed or
// digested, waiting for a seq.
type pending struct {
	ev     Event // Content nil
	mode   ContentMode
	mac    Hash
	key    []byte
	sealed []byte
	digest Hash // sealedDigest(key, sealed)
	done   chan result
}

type result struct {
	seq uint64
	err error
}

// maxBatch bounds the events one group commit writes.
const maxBatch = 4096

// maxConflictRetries bounds how often a group commit rebuilds its batch
// over a head another writer moved.
const maxConflictRetries = 100

// New returns a Log over store. It refuses unusable Keys and a
// zero-data-retention log without Keys.
func New(store Store, opts Options) (*Log, error) {
	if store == nil {
		return nil, errStoreMissing
	}
	if opts.Keys != nil && !opts.Keys.ok {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "eventlog: Keys not built with NewKeys")
	}
	if opts.ZeroDataRetention && opts.Keys == nil {
		return nil, checkfu.Refuse(CodeContentKeyMissing, "eventlog: a zero-data-retention log needs Keys for its keyed content digests")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.Witness != nil && opts.Signer == nil {
		return nil, checkfu.Refuse(CodeCheckpointSignerMissing, "eventlog: a log with a Witness needs a Signer for its checkpoints")
	}
	return &Log{store: store, keys: opts.Keys, zdr: opts.ZeroDataRetention, now: now,
		signer: opts.Signer, witness: opts.Witness, queues: map[string]*queue{},
		meters: telemetry.NewLogMetrics(opts.MeterProvider)}, nil
}

// Store returns the store the log writes to.
func (l *Log) Store() Store {
	if l == nil {
		return nil
	}
	return l.store
}

// TakesContent reports whether the log accepts an event with content:
// it has Keys to seal it (or, with zero data retention, to digest it).
func (l *Log) TakesContent() bool { return l != nil && l.keys != nil }

// usable refuses a Log without a Store, so that the zero Log and a nil
// *Log refuse every call instead of panicking.
func (l *Log) usable() error {
	if l == nil || l.store == nil {
		return errStoreMissing
	}
	return nil
}

// prepare validates ev and seals or digests its content, without a seq.
func (l *Log) prepare(session string, ev Event) (*pending, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	if ev.Kind == KindShred {
		return nil, checkfu.Refuse(CodeEventInvalid, "eventlog: a shred event is appended only by Log.Shred")
	}
	if ev.Time.IsZero() {
		ev.Time = l.now()
	}
	ev.Time = ev.Time.UTC().Round(0)
	p := &pending{done: make(chan result, 1)}
	content := ev.Content
	ev.Content = nil
	p.ev = ev
	if len(content) == 0 {
		return p, nil
	}
	if l.keys == nil {
		return nil, checkfu.Refuse(CodeContentKeyMissing, "eventlog: event has content but the log has no keys to seal it (configure Options.Keys)")
	}
	p.mac = l.keys.digest(session, content)
	if l.zdr {
		p.mode = ContentDigestOnly
		return p, nil
	}
	key, sealed, err := l.keys.seal(session, p.mac, content)
	if err != nil {
		return nil, err
	}
	p.mode, p.key, p.sealed, p.digest = ContentSealed, key, sealed, sealedDigest(key, sealed)
	return p, nil
}

// build numbers batch after head and chains it.
func build(session string, head Head, batch []*pending) []Record {
	recs := make([]Record, len(batch))
	prev := head.Hash
	for i, p := range batch {
		env := envelope{session: session, seq: head.Seq + uint64(i) + 1, prev: prev, event: p.ev, mode: p.mode, mac: p.mac, sealed: p.digest}
		enc := env.encode()
		h := chainHash(enc)
		recs[i] = Record{Seq: env.seq, Envelope: enc, Hash: h, DataKey: p.key, Sealed: p.sealed}
		prev = h
	}
	return recs
}

// Append appends ev to session and returns its seq once it is durable.
// Concurrent appends to one session share a transaction. When another
// writer (another Log, another process) appended in between, the batch is
// rebuilt over the new head, so Append never fails for a conflict it can
// resolve; use [Log.AppendAt] to make the expected position a condition.
//
// If ctx ends while the event is being committed, Append returns the
// context's error and the event may or may not be in the log.
func (l *Log) Append(ctx context.Context, session string, ev Event) (uint64, error) {
	p, err := l.prepare(session, ev)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	q := l.queues[session]
	if q == nil {
		q = &queue{}
		l.queues[session] = q
	}
	q.waiting = append(q.waiting, p)
	lead := !q.leading
	q.leading = true
	l.mu.Unlock()
	if lead {
		go l.lead(context.WithoutCancel(ctx), session, q)
	}
	select {
	case r := <-p.done:
		if r.err == nil {
			l.meters.Appended(ctx, 1)
		}
		return r.seq, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// lead commits the queue of session until it is empty. It runs on its own
// goroutine so that no caller waits longer than its own batch.
func (l *Log) lead(ctx context.Context, session string, q *queue) {
	for {
		l.mu.Lock()
		batch := q.waiting
		if len(batch) > maxBatch {
			batch = batch[:maxBatch:maxBatch]
		}
		q.waiting = q.waiting[len(batch):]
		if len(batch) == 0 {
			// Idle: forget the queue (and its cached head) so that a Log
			// serving many sessions does not grow without bound.
			q.leading = false
			delete(l.queues, session)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		l.commit(ctx, session, q, batch)
	}
}

func (l *Log) commit(ctx context.Context, session string, q *queue, batch []*pending) {
	var err error
	for range maxConflictRetries {
		if !q.known {
			if q.head, err = l.store.Head(ctx, session); err != nil {
				break
			}
			q.known = true
		}
		recs := build(session, q.head, batch)
		err = l.store.Append(ctx, session, q.head.Seq, recs)
		if err == nil {
			for i, p := range batch {
				p.done <- result{seq: recs[i].Seq}
			}
			last := recs[len(recs)-1]
			q.head = Head{Seq: last.Seq, Hash: last.Hash}
			return
		}
		q.known = false
		if !errors.Is(err, CodeSeqConflict) {
			break
		}
	}
	for _, p := range batch {
		p.done <- result{err: err}
	}
}

// AppendAt appends evs to session as one atomic batch if and only if the
// session's last seq is expected, and returns the new head. A stale
// expected seq is refused with [CodeSeqConflict] and nothing is written.
// AppendAt does not take part in group commit.
func (l *Log) AppendAt(ctx context.Context, session string, expected uint64, evs ...Event) (Head, error) {
	heads, err := l.AppendBatch(ctx, session, expected, evs...)
	if err != nil {
		return Head{}, err
	}
	return heads[len(heads)-1], nil
}

// AppendBatch is [Log.AppendAt] that returns the head after each event:
// heads[i] holds the seq and chain hash of evs[i].
func (l *Log) AppendBatch(ctx context.Context, session string, expected uint64, evs ...Event) ([]Head, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	batch := make([]*pending, len(evs))
	for i, ev := range evs {
		p, err := l.prepare(session, ev)
		if err != nil {
			return nil, err
		}
		batch[i] = p
	}
	if len(batch) == 0 {
		return nil, checkfu.Refuse(CodeEventInvalid, "eventlog: AppendAt with no events")
	}
	head, err := l.store.Head(ctx, session)
	if err != nil {
		return nil, err
	}
	if head.Seq != expected {
		return nil, SeqConflict(session, expected, head.Seq)
	}
	recs := build(session, head, batch)
	if err := l.store.Append(ctx, session, expected, recs); err != nil {
		return nil, err
	}
	l.meters.Appended(ctx, len(recs))
	heads := make([]Head, len(recs))
	for i, r := range recs {
		heads[i] = Head{Seq: r.Seq, Hash: r.Hash}
	}
	return heads, nil
}

// Head returns the head of session as the store holds it, unverified.
func (l *Log) Head(ctx context.Context, session string) (Head, error) {
	if err := l.usable(); err != nil {
		return Head{}, err
	}
	return l.store.Head(ctx, session)
}

// Shred deletes the data key and sealed content of the event at seq and
// records the deletion as an event of its own: a [KindShred] event
// naming seq, appended in the same store transaction. The envelope of
// seq stays and the chain still verifies; [Log.Content] then refuses with
// [CodeContentShredded]. Content deleted any other way (by SQL, behind
// the log's back) has no shred event, and [Verify] refuses it.
//
// Shredding an event without sealed content, or one already shredded,
// does nothing and returns nil; a seq the session does not hold is
// refused with [CodeEventNotFound].
func (l *Log) Shred(ctx context.Context, session string, seq uint64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if err := CheckSession(session); err != nil {
		return err
	}
	var err error
	for range maxConflictRetries {
		var done bool
		if done, err = l.shredOnce(ctx, session, seq); done || !errors.Is(err, CodeSeqConflict) && !errors.Is(err, CodeContentMissing) {
			return err
		}
	}
	return err
}

// shredOnce reads the event at seq and, when it still holds content,
// has the store delete it and append the shred event after the head it
// read. done is false when the store refused because the log moved.
func (l *Log) shredOnce(ctx context.Context, session string, seq uint64) (done bool, err error) {
	recs, err := l.store.Read(ctx, session, seq, 1)
	if err != nil {
		return true, err
	}
	if len(recs) == 0 || recs[0].Seq != seq {
		return true, checkfu.Refuse(CodeEventNotFound, "eventlog: session %s has no seq %d", checkfu.Quote(session), seq)
	}
	v := verifier{session: session, next: seq}
	env, err := v.checkAlone(&recs[0])
	if err != nil {
		return true, err
	}
	if env.mode != ContentSealed || recs[0].Sealed == nil {
		return true, nil
	}
	if l.keys == nil {
		return true, checkfu.Refuse(CodeContentKeyMissing, "eventlog: Shred needs the log's keys to authenticate the shred event (configure Options.Keys)")
	}
	head, err := l.store.Head(ctx, session)
	if err != nil {
		return true, err
	}
	ev := Event{Kind: KindShred, Time: l.now().UTC().Round(0), Label: env.event.Label}
	if err := ev.Validate(); err != nil {
		return true, err
	}
	shred := envelope{session: session, seq: head.Seq + 1, prev: head.Hash, event: ev, shredOf: seq,
		shredTag: l.keys.shredTag(session, seq, recs[0].Hash)}
	enc := shred.encode()
	err = l.store.Shred(ctx, session, seq, head.Seq, Record{Seq: shred.seq, Envelope: enc, Hash: chainHash(enc)})
	return err == nil, err
}
