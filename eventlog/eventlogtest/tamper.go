package eventlogtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
)

// tamper appends six events with content to a fresh session, applies edit
// through the harness and returns the ChainError Verify reports.
func tamper(t testing.TB, h harness, edit func([]eventlog.Record) []eventlog.Record) *eventlog.ChainError {
	t.Helper()
	return tamperSession(t, h, "s-tamper", edit)
}

// tamperSession is tamper in a session of the caller's choosing, for a
// test that tampers more than once with one store.
func tamperSession(t testing.TB, h harness, session string, edit func([]eventlog.Record) []eventlog.Record) *eventlog.ChainError {
	t.Helper()
	l := open(t, h, keyed(t))
	appendN(t, l, session, 6)
	if _, err := eventlog.Verify(context.Background(), l.Store(), session); err != nil {
		t.Fatalf("Verify before tampering: %v", err)
	}
	h.Rewrite(t, session, edit)
	_, err := eventlog.Verify(context.Background(), l.Store(), session)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || !errors.Is(err, eventlog.CodeChainBroken) {
		t.Fatalf("Verify after tampering = %v, want a ChainError", err)
	}
	// Reading must stop at the same place.
	var readErr error
	for _, err := range l.Read(context.Background(), session, 1) {
		readErr = err
	}
	var rce *eventlog.ChainError
	if !errors.As(readErr, &rce) || rce.Seq != ce.Seq {
		t.Errorf("Read after tampering ended with %v, want a ChainError at seq %d", readErr, ce.Seq)
	}
	return ce
}

// wantSeq checks the seq Verify named and that its diagnosis mentions
// what happened.
func wantSeq(t testing.TB, ce *eventlog.ChainError, seq uint64, problem string) {
	t.Helper()
	if ce.Seq != seq || !strings.Contains(ce.Problem, problem) {
		t.Errorf("Verify reported %v, want seq %d with a problem mentioning %q", ce, seq, problem)
	}
}

func testTamperChanged(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		r[2].Envelope[len(r[2].Envelope)/2] ^= 0x01
		return r
	})
	wantSeq(t, ce, 3, "does not match its hash")
	// Content is refused too: the record it would come from is not the
	// one the chain committed to.
	_, err := open(t, h, keyed(t)).Content(context.Background(), "s-tamper", 3)
	var cce *eventlog.ChainError
	if !errors.As(err, &cce) || cce.Seq != 3 || !strings.Contains(cce.Problem, "hash") {
		t.Errorf("Content of the changed event = %v, want a ChainError at seq 3 about its hash", err)
	}
}

// ChainHash recomputes a record hash the way an attacker who knows the
// format would: SHA-256 over the domain label and the envelope.
func ChainHash(envelope []byte) eventlog.Hash {
	return sha256.Sum256(append([]byte("checkfu/eventlog/chain/v1\x00"), envelope...))
}

func testTamperRehashed(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		// Swap two bytes of the event time: still a valid envelope.
		env := r[2].Envelope
		i := bytes.Index(env, []byte("s-tamper")) + len("s-tamper") + 8 + 32
		env[i+6], env[i+7] = env[i+7]^0x55, env[i+6]
		r[2].Hash = ChainHash(env)
		return r
	})
	wantSeq(t, ce, 4, "does not link")
}

// testTamperContext rewrites who an event was for: the tenant, the
// session, the channel and the actor of seq 3's request context, each to a value of
// the same length, the record rehashed. Each is caught at seq 4, whose
// link no longer holds; left unhashed, at seq 3 itself.
func testTamperContext(t testing.TB, h harness) {
	for _, f := range []struct{ from, to string }{
		{"org-1", "org-2"}, {"ws-1", "ws-2"}, {"proj-1", "proj-2"}, {"sess-1", "sess-2"}, {"chan-1", "chan-2"}, {"member", "admins"}, {"agent:test", "agent:root"},
	} {
		edit := func(rehash bool) func(r []eventlog.Record) []eventlog.Record {
			return func(r []eventlog.Record) []eventlog.Record {
				env := r[2].Envelope
				i := bytes.LastIndex(env, []byte(f.from))
				if i < 0 {
					t.Fatalf("seq 3's envelope does not hold %q", f.from)
				}
				copy(env[i:], f.to)
				if rehash {
					r[2].Hash = ChainHash(env)
				}
				return r
			}
		}
		wantSeq(t, tamperSession(t, h, "s-ctx-rehashed-"+f.from, edit(true)), 4, "does not link")
		wantSeq(t, tamperSession(t, h, "s-ctx-changed-"+f.from, edit(false)), 3, "does not match its hash")
	}
}

func testTamperRemoved(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record { return slices.Delete(r, 2, 3) })
	wantSeq(t, ce, 3, "missing")
}

func testTamperReordered(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		r[2].Seq, r[3].Seq = r[3].Seq, r[2].Seq
		r[2], r[3] = r[3], r[2]
		return r
	})
	wantSeq(t, ce, 3, "reordered")
}

func testTamperInserted(t testing.TB, h harness) {
	// A well-formed event for the same session and seq 3, from a forger's
	// own log: its hash and envelope agree, only its link is wrong.
	forger, err := eventlog.New(eventlog.NewMemoryStore(), keyed(t))
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, forger, "s-tamper", 3)
	forged, err := forger.Store().Read(context.Background(), "s-tamper", 3, 1)
	if err != nil || len(forged) != 1 {
		t.Fatalf("forger read: %v %v", forged, err)
	}
	forged[0].Envelope[bytes.Index(forged[0].Envelope, []byte("agent:test"))] = 'A'
	forged[0].Hash = ChainHash(forged[0].Envelope)
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		for i := 2; i < len(r); i++ {
			r[i].Seq++
		}
		return slices.Insert(r, 2, forged[0])
	})
	wantSeq(t, ce, 3, "does not link")
}

func testTamperContent(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		r[2].Sealed[len(r[2].Sealed)-1] ^= 0x80
		return r
	})
	wantSeq(t, ce, 3, "content was changed")
}

func testTamperTruncated(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	recorded := appendN(t, l, "s-trunc", 4)
	h.Rewrite(t, "s-trunc", func(r []eventlog.Record) []eventlog.Record { return r[:3] })
	if _, err := eventlog.Verify(ctx, l.Store(), "s-trunc"); err != nil {
		t.Fatalf("Verify of a truncated log without a head: %v (a chain alone cannot see truncation)", err)
	}
	_, err := eventlog.VerifyHead(ctx, l.Store(), "s-trunc", recorded)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || ce.Seq != 4 || !strings.Contains(ce.Problem, "truncated") {
		t.Errorf("VerifyHead after truncation = %v, want a ChainError at seq 4 saying the log was truncated", err)
	}
}

func testTamperMoved(t testing.TB, h harness) {
	// Another session's whole log, every hash and link intact: only the
	// session each envelope names gives it away.
	l := open(t, h, keyed(t))
	appendN(t, l, "s-other", 6)
	other, err := l.Store().Read(context.Background(), "s-other", 1, 100)
	if err != nil || len(other) != 6 {
		t.Fatalf("Read s-other: %d records, %v", len(other), err)
	}
	ce := tamper(t, h, func([]eventlog.Record) []eventlog.Record { return other })
	wantSeq(t, ce, 1, "moved between sessions")
}

func testTamperContentAttached(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	if _, err := l.AppendAt(ctx, "s-attach", 0, Sample(eventlog.KindDenial, 1, ""), Sample(eventlog.KindToolCall, 2, "content")); err != nil {
		t.Fatal(err)
	}
	h.Rewrite(t, "s-attach", func(r []eventlog.Record) []eventlog.Record {
		r[0].DataKey, r[0].Sealed = slices.Clone(r[1].DataKey), slices.Clone(r[1].Sealed)
		return r
	})
	_, err := eventlog.Verify(ctx, l.Store(), "s-attach")
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("Verify with content attached to an event without any = %v, want a ChainError", err)
	}
	wantSeq(t, ce, 1, "does not commit to")
}

func testTamperRewritten(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	recorded := appendN(t, l, "s-rewrite", 4)
	// The same events chained afresh: fresh data keys give other hashes,
	// and the forged chain verifies on its own.
	forger, err := eventlog.New(eventlog.NewMemoryStore(), keyed(t))
	if err != nil {
		t.Fatal(err)
	}
	if forgedHead := appendN(t, forger, "s-rewrite", 4); forgedHead.Hash == recorded.Hash {
		t.Fatal("the forged chain has the recorded head: the test proves nothing")
	}
	forged, err := forger.Store().Read(ctx, "s-rewrite", 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	h.Rewrite(t, "s-rewrite", func([]eventlog.Record) []eventlog.Record { return forged })
	if _, err := eventlog.Verify(ctx, l.Store(), "s-rewrite"); err != nil {
		t.Fatalf("Verify of a rewritten log without a head: %v (a chain alone cannot see a rewrite)", err)
	}
	_, err = eventlog.VerifyHead(ctx, l.Store(), "s-rewrite", recorded)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || ce.Seq != 4 || !strings.Contains(ce.Problem, "rewritten") {
		t.Errorf("VerifyHead after a rewrite = %v, want a ChainError at seq 4 saying the log was rewritten", err)
	}
}

// testTamperContentDeleted deletes one event's content row the way SQL
// would, without Log.Shred: there is no shred event, so it is tampering,
// not a shred, and Content refuses it as such.
func testTamperContentDeleted(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		r[2].DataKey, r[2].Sealed = nil, nil
		return r
	})
	wantSeq(t, ce, 3, "no shred event records its deletion")
	_, err := open(t, h, keyed(t)).Content(context.Background(), "s-tamper", 3)
	var cce *eventlog.ChainError
	if errors.Is(err, eventlog.CodeContentShredded) || !errors.As(err, &cce) || cce.Seq != 3 {
		t.Errorf("Content of content deleted behind the log's back = %v, want a ChainError at seq 3, not %s", err, eventlog.CodeContentShredded)
	}
}

// testTamperShredForged deletes content and marks it shredded by an
// event that is not a shred event.
func testTamperShredForged(t testing.TB, h harness) {
	ce := tamper(t, h, func(r []eventlog.Record) []eventlog.Record {
		r[2].DataKey, r[2].Sealed, r[2].ShreddedBy = nil, nil, 5
		return r
	})
	wantSeq(t, ce, 3, "is not a shred event")
	_, err := open(t, h, keyed(t)).Content(context.Background(), "s-tamper", 3)
	var cce *eventlog.ChainError
	if !errors.As(err, &cce) || cce.Seq != 3 {
		t.Errorf("Content of content with a forged shred mark = %v, want a ChainError at seq 3", err)
	}
}

// shredThenTamper appends four events with content to session, shreds
// seq 2 (the shred event is seq 5), applies edit (which also gets the
// records as they were before the shred) and returns Verify's ChainError.
func shredThenTamper(t testing.TB, h harness, session string, edit func(before, now []eventlog.Record) []eventlog.Record) *eventlog.ChainError {
	t.Helper()
	ctx := context.Background()
	l := open(t, h, keyed(t))
	appendN(t, l, session, 4)
	before, err := l.Store().Read(ctx, session, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Shred(ctx, session, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Verify(ctx, l.Store(), session); err != nil {
		t.Fatalf("Verify before tampering: %v", err)
	}
	h.Rewrite(t, session, func(now []eventlog.Record) []eventlog.Record { return edit(before, now) })
	_, err = eventlog.Verify(ctx, l.Store(), session)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("Verify after tampering = %v, want a ChainError", err)
	}
	return ce
}

// testTamperShredEventRemoved removes the shred event itself (the newest
// event): the shredded record names a shred event the log no longer
// holds, so the truncation shows even without a checkpoint.
func testTamperShredEventRemoved(t testing.TB, h harness) {
	ce := shredThenTamper(t, h, "s-shred-removed", func(_, r []eventlog.Record) []eventlog.Record { return r[:4] })
	wantSeq(t, ce, 2, "is not in the log")
}

// testTamperShredUndone restores shredded content from a copy taken
// before the shred and clears its shred mark: the shred event then
// records a shred that no longer holds.
func testTamperShredUndone(t testing.TB, h harness) {
	ce := shredThenTamper(t, h, "s-shred-undone", func(before, r []eventlog.Record) []eventlog.Record {
		r[1].DataKey, r[1].Sealed, r[1].ShreddedBy = before[1].DataKey, before[1].Sealed, 0
		return r
	})
	wantSeq(t, ce, 5, "the shred was undone")
	// Clearing only the mark leaves content missing with no shred.
	ce = shredThenTamper(t, h, "s-shred-unmarked", func(_, r []eventlog.Record) []eventlog.Record {
		r[1].ShreddedBy = 0
		return r
	})
	wantSeq(t, ce, 2, "no shred event records its deletion")
}

// testTamperShredMarksSwapped shreds seqs 2 and 3 (shred events 5 and
// 6) and swaps their marks: each names a real shred event, but not its
// own.
func testTamperShredMarksSwapped(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	const session = "s-shred-swap"
	appendN(t, l, session, 4)
	for _, seq := range []uint64{2, 3} {
		if err := l.Shred(ctx, session, seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eventlog.Verify(ctx, l.Store(), session); err != nil {
		t.Fatalf("Verify before tampering: %v", err)
	}
	h.Rewrite(t, session, func(r []eventlog.Record) []eventlog.Record {
		r[1].ShreddedBy, r[2].ShreddedBy = r[2].ShreddedBy, r[1].ShreddedBy
		return r
	})
	_, err := eventlog.Verify(ctx, l.Store(), session)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("Verify after swapping shred marks = %v, want a ChainError", err)
	}
	wantSeq(t, ce, 3, "shredded seq 2")
}
