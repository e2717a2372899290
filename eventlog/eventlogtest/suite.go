package eventlogtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// A Harness gives the suite access to one backing storage, for a
// store's own tests (the suite's type parameter T is *testing.T).
type Harness = HarnessOf[*testing.T]

// A HarnessOf gives the suite access to one backing storage; T is the
// test type the suite runs under ([Harness] for *testing.T).
type HarnessOf[T testing.TB] struct {
	// Open returns a new handle on the harness's storage; every handle
	// sees the same logs, including everything appended through a handle
	// that was closed (the suite's reopen). The suite closes the handles
	// it opens.
	Open func(t T) eventlog.Store
	// Rewrite replaces every record of session with edit(records),
	// bypassing the Store API, as an attacker with write access to the
	// storage would. edit receives the records in seq order and may
	// return them changed, reordered, fewer or more.
	Rewrite func(t T, session string, edit func([]eventlog.Record) []eventlog.Record)
}

// harness is a HarnessOf with the test type erased: every t the suite
// passes it is the T of the subtest it runs in.
type harness struct {
	Open    func(t testing.TB) eventlog.Store
	Rewrite func(t testing.TB, session string, edit func([]eventlog.Record) []eventlog.Record)
}

func erase[T testing.TB](h HarnessOf[T]) harness {
	return harness{
		Open: func(t testing.TB) eventlog.Store { return h.Open(t.(T)) },
		Rewrite: func(t testing.TB, session string, edit func([]eventlog.Record) []eventlog.Record) {
			h.Rewrite(t.(T), session, edit)
		},
	}
}

// FixedKeys returns Keys derived from a fixed master key (32 bytes of
// 0x42), for tests and examples: never for a real log.
func FixedKeys(t testing.TB) *eventlog.Keys {
	k, err := eventlog.NewKeys(bytes.Repeat([]byte{0x42}, eventlog.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestStore runs the conformance suite. newHarness is called once per
// subtest and must return fresh storage (or storage in which the suite's
// session ids are unused).
func TestStore[T testing.TB](t T, newHarness func(t T) HarnessOf[T]) {
	tests := []struct {
		name string
		f    func(t testing.TB, h harness)
	}{
		{"AppendRead", testAppendRead},
		{"SeqConflict", testSeqConflict},
		{"StoreRefusesBadAppends", testBadAppends},
		{"ConcurrentAppenders", testConcurrent},
		{"Follow", testFollow},
		{"TamperChanged", testTamperChanged},
		{"TamperChangedAndRehashed", testTamperRehashed},
		{"TamperRemoved", testTamperRemoved},
		{"TamperReordered", testTamperReordered},
		{"TamperInserted", testTamperInserted},
		{"TamperContent", testTamperContent},
		{"TamperTruncatedAgainstHead", testTamperTruncated},
		{"TamperRewrittenAgainstHead", testTamperRewritten},
		{"TamperContext", testTamperContext},
		{"TamperMovedBetweenSessions", testTamperMoved},
		{"TamperContentAttached", testTamperContentAttached},
		{"TamperContentDeleted", testTamperContentDeleted},
		{"TamperShredForged", testTamperShredForged},
		{"TamperShredEventRemoved", testTamperShredEventRemoved},
		{"TamperShredUndone", testTamperShredUndone},
		{"TamperShredMarksSwapped", testTamperShredMarksSwapped},
		{"CheckpointTruncated", testCheckpointTruncated},
		{"CheckpointRolledBack", testCheckpointRolledBack},
		{"WitnessRefusesRollback", testWitnessRefusesRollback},
		{"WitnessProof", testWitnessProof},
		{"Shred", testShred},
		{"ZeroDataRetention", testZDR},
		{"PropertyInterleavings", testPropInterleavings},
		{"PropertySingleByteTamper", testPropTamper},
		{"PropertyConcurrentOrder", testPropConcurrentOrder},
		{"Sequence", testSequence},
	}
	for _, tt := range tests {
		suitetest.Run(t, tt.name, func(t T) { tt.f(t, erase(newHarness(t))) })
	}
}

func open(t testing.TB, h harness, opts eventlog.Options) *eventlog.Log {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	l, err := eventlog.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func keyed(t testing.TB) eventlog.Options { return eventlog.Options{Keys: FixedKeys(t)} }

// appendN appends n sample events with content to session, one batch.
func appendN(t testing.TB, l *eventlog.Log, session string, n int) eventlog.Head {
	t.Helper()
	head, err := l.Head(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]eventlog.Event, n)
	for i := range evs {
		evs[i] = Sample(eventlog.KindToolCall, int(head.Seq)+i, fmt.Sprintf("arguments of call %d", int(head.Seq)+i+1))
	}
	h, err := l.AppendAt(context.Background(), session, head.Seq, evs...)
	if err != nil {
		t.Fatalf("AppendAt: %v", err)
	}
	return h
}

func readAll(t testing.TB, l *eventlog.Log, session string, from uint64) []eventlog.Entry {
	t.Helper()
	var out []eventlog.Entry
	for e, err := range l.Read(context.Background(), session, from) {
		if err != nil {
			t.Fatalf("Read(%q, %d): %v", session, from, err)
		}
		out = append(out, e)
	}
	return out
}

func testAppendRead(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	for i := 1; i <= 10; i++ {
		seq, err := l.Append(ctx, "s-read", Sample(eventlog.KindToolCall, i, fmt.Sprintf("content %d", i)))
		if err != nil || seq != uint64(i) {
			t.Fatalf("Append #%d = %d, %v; want seq %d", i, seq, err, i)
		}
	}
	all := readAll(t, l, "s-read", 1)
	if len(all) != 10 {
		t.Fatalf("read %d events, want 10", len(all))
	}
	for i, e := range all {
		want := Sample(eventlog.KindToolCall, i+1, "")
		if e.Seq != uint64(i+1) || e.Session != "s-read" || e.Event.Time != want.Time || e.Tool != want.Tool || e.Label != want.Label {
			t.Errorf("entry %d = seq %d %+v, want seq %d %+v", i, e.Seq, e.Event, i+1, want)
		}
		if e.Content != nil || e.ContentMode != eventlog.ContentSealed {
			t.Errorf("entry %d: content %q mode %v, want nil and sealed", i, e.Content, e.ContentMode)
		}
		if i > 0 && e.Prev != all[i-1].Hash {
			t.Errorf("entry %d does not link to entry %d", i, i-1)
		}
		got, err := l.Content(ctx, "s-read", e.Seq)
		if err != nil || string(got) != fmt.Sprintf("content %d", i+1) {
			t.Errorf("Content(%d) = %q, %v", e.Seq, got, err)
		}
	}
	if got := readAll(t, l, "s-read", 5); len(got) != 6 || got[0].Seq != 5 {
		t.Errorf("Read from 5 gave %d events starting %v, want 6 from seq 5", len(got), got)
	}
	if got := readAll(t, l, "s-read", 11); len(got) != 0 {
		t.Errorf("Read from 11 gave %d events, want none", len(got))
	}
	if got := readAll(t, l, "s-empty", 1); len(got) != 0 {
		t.Errorf("Read of an empty session gave %d events", len(got))
	}
	head, err := eventlog.Verify(ctx, l.Store(), "s-read")
	if err != nil || head.Seq != 10 || head.Hash != all[9].Hash {
		t.Errorf("Verify = %v, %v; want seq 10 hash %v", head, err, all[9].Hash)
	}
	if _, err := l.Content(ctx, "s-read", 11); !errors.Is(err, eventlog.CodeEventNotFound) {
		t.Errorf("Content(11) error %v, want %s", err, eventlog.CodeEventNotFound)
	}
}

func testSeqConflict(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	if _, err := l.AppendAt(ctx, "s-occ", 0, Sample(eventlog.KindDenial, 1, ""), Sample(eventlog.KindDenial, 2, "")); err != nil {
		t.Fatal(err)
	}
	before, err := l.Store().Read(ctx, "s-occ", 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, expected := range []uint64{0, 1, 3, 7} {
		_, err := l.AppendAt(ctx, "s-occ", expected, Sample(eventlog.KindSettlement, 9, "late"))
		if !errors.Is(err, eventlog.CodeSeqConflict) {
			t.Errorf("AppendAt(expected %d) on a log at 2: error %v, want %s", expected, err, eventlog.CodeSeqConflict)
		}
	}
	// The store itself must refuse, not only the Log: a second writer
	// that read the head before the first appended still holds it.
	stale := slices.Clone(before[:1])
	for i := range stale {
		stale[i].Envelope = append([]byte(nil), before[1].Envelope...)
	}
	if err := l.Store().Append(ctx, "s-occ", 0, stale); !errors.Is(err, eventlog.CodeSeqConflict) {
		t.Errorf("Store.Append(expected 0) on a log at 2: error %v, want %s", err, eventlog.CodeSeqConflict)
	}
	gap := []eventlog.Record{{Seq: 4, Envelope: before[0].Envelope, Hash: before[0].Hash}}
	if err := l.Store().Append(ctx, "s-occ", 3, gap); !errors.Is(err, eventlog.CodeSeqConflict) {
		t.Errorf("Store.Append(expected 3) on a log at 2: error %v, want %s", err, eventlog.CodeSeqConflict)
	}
	after, err := l.Store().Read(ctx, "s-occ", 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !recordsEqual(before, after) {
		t.Errorf("records changed by refused appends:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := eventlog.Verify(ctx, l.Store(), "s-occ"); err != nil {
		t.Errorf("Verify after refused appends: %v", err)
	}
}

func recordsEqual(a, b []eventlog.Record) bool {
	return slices.EqualFunc(a, b, func(x, y eventlog.Record) bool {
		return x.Seq == y.Seq && x.Hash == y.Hash && bytes.Equal(x.Envelope, y.Envelope) &&
			bytes.Equal(x.DataKey, y.DataKey) && bytes.Equal(x.Sealed, y.Sealed)
	})
}

func testBadAppends(t testing.TB, h harness) {
	ctx := context.Background()
	s := h.Open(t)
	defer s.Close()
	rec := eventlog.Record{Seq: 1, Envelope: []byte{1}, Hash: sha256.Sum256([]byte{1})}
	tests := []struct {
		name     string
		session  string
		expected uint64
		recs     []eventlog.Record
		code     checkfu.Code
	}{
		{"empty session", "", 0, []eventlog.Record{rec}, eventlog.CodeSessionInvalid},
		{"session with a space", "a b", 0, []eventlog.Record{rec}, eventlog.CodeSessionInvalid},
		{"no records", "s-bad", 0, nil, eventlog.CodeEventInvalid},
		{"seq gap", "s-bad", 0, []eventlog.Record{{Seq: 2, Envelope: []byte{1}}}, eventlog.CodeEventInvalid},
		{"no envelope", "s-bad", 0, []eventlog.Record{{Seq: 1}}, eventlog.CodeEventInvalid},
		{"half content", "s-bad", 0, []eventlog.Record{{Seq: 1, Envelope: []byte{1}, Sealed: []byte{1}}}, eventlog.CodeEventInvalid},
	}
	for _, tt := range tests {
		if err := s.Append(ctx, tt.session, tt.expected, tt.recs); !errors.Is(err, tt.code) {
			t.Errorf("%s: Append error %v, want %s", tt.name, err, tt.code)
		}
	}
	if head, err := s.Head(ctx, "s-bad"); err != nil || head.Seq != 0 {
		t.Errorf("Head after refused appends = %v, %v; want empty", head, err)
	}
}

func testConcurrent(t testing.TB, h harness) {
	const writers, perWriter, goroutines = 3, 20, 4
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	var failed atomic.Bool
	for w := range writers {
		l := open(t, h, keyed(t)) // a separate handle (connection) per writer
		for g := range goroutines {
			wg.Go(func() {
				for i := range perWriter {
					seq, err := l.Append(ctx, "s-conc", Sample(eventlog.KindProcessStarted, w*1000+g*100+i, "x"))
					if err != nil {
						t.Errorf("writer %d goroutine %d: Append: %v", w, g, err)
						failed.Store(true)
						return
					}
					mu.Lock()
					if seen[seq] {
						t.Errorf("seq %d returned twice", seq)
					}
					seen[seq] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if failed.Load() {
		return
	}
	total := writers * perWriter * goroutines
	for s := uint64(1); s <= uint64(total); s++ {
		if !seen[s] {
			t.Errorf("seq %d never returned", s)
		}
	}
	head, err := eventlog.Verify(ctx, h.Open(t), "s-conc")
	if err != nil || head.Seq != uint64(total) {
		t.Errorf("Verify = %v, %v; want %d events", head, err, total)
	}
}

func testFollow(t testing.TB, h harness) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reader := open(t, h, keyed(t))
	writer := open(t, h, keyed(t))
	appendN(t, writer, "s-follow", 3)
	got := make(chan eventlog.Entry)
	done := make(chan error, 1)
	go func() {
		for e, err := range reader.Follow(ctx, "s-follow", 2) {
			if err != nil {
				done <- err
				return
			}
			got <- e
		}
		done <- nil
	}()
	want := uint64(2)
	for ; want <= 3; want++ {
		if e := <-got; e.Seq != want {
			t.Fatalf("followed seq %d, want %d", e.Seq, want)
		}
	}
	for i := range 5 {
		if _, err := writer.Append(ctx, "s-follow", Sample(eventlog.KindApprovalDecision, i, "")); err != nil {
			t.Fatal(err)
		}
		if e := <-got; e.Seq != want {
			t.Fatalf("followed seq %d, want %d", e.Seq, want)
		}
		want++
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow ended with %v, want context.Canceled", err)
	}
}

func testShred(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, keyed(t))
	appendN(t, l, "s-shred", 4)
	if err := l.Shred(ctx, "s-shred", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Content(ctx, "s-shred", 2); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content of a shredded event: %v, want %s", err, eventlog.CodeContentShredded)
	}
	if got, err := l.Content(ctx, "s-shred", 3); err != nil || string(got) != "arguments of call 3" {
		t.Errorf("Content(3) after shredding 2 = %q, %v", got, err)
	}
	recs, err := l.Store().Read(ctx, "s-shred", 2, 1)
	if err != nil || len(recs) != 1 || recs[0].DataKey != nil || recs[0].Sealed != nil || recs[0].ShreddedBy != 5 {
		t.Errorf("stored record 2 after Shred = %+v, %v; want no data key, no content, shredded by seq 5", recs, err)
	}
	head, err := eventlog.Verify(ctx, l.Store(), "s-shred")
	if err != nil || head.Seq != 5 {
		t.Errorf("Verify after Shred = %v, %v; want the head at seq 5 (the shred event)", head, err)
	}
	entries := readAll(t, l, "s-shred", 1)
	if len(entries) != 5 || !entries[1].Shredded || entries[2].Shredded {
		t.Fatalf("entries after Shred: %+v, want only seq 2 shredded", entries)
	}
	if e := entries[4]; e.Kind != eventlog.KindShred || e.ShredOf != 2 || e.Label != entries[1].Label || e.Shredded {
		t.Errorf("entry 5 = %+v, want a shred event of seq 2 with seq 2's label", e)
	}
	if got := readAll(t, l, "s-shred", 3); len(got) != 3 || got[2].ShredOf != 2 {
		t.Errorf("Read from 3 after Shred = %+v, want seqs 3-5, the shred event last", got)
	}
	// Shredding again, or an event without content, records nothing.
	for _, seq := range []uint64{2, 5} {
		if err := l.Shred(ctx, "s-shred", seq); err != nil {
			t.Errorf("Shred(%d) again = %v", seq, err)
		}
	}
	if head, _ := l.Head(ctx, "s-shred"); head.Seq != 5 {
		t.Errorf("after shredding twice the head is at seq %d, want 5", head.Seq)
	}
	if err := l.Shred(ctx, "s-shred", 9); !errors.Is(err, eventlog.CodeEventNotFound) {
		t.Errorf("Shred(9) = %v, want %s", err, eventlog.CodeEventNotFound)
	}
	// The store refuses a shred over a stale head, and of a record with
	// no content, writing nothing.
	shred := eventlog.Record{Seq: 6, Envelope: []byte{1}, Hash: sha256.Sum256([]byte{1})}
	if err := l.Store().Shred(ctx, "s-shred", 3, 4, eventlog.Record{Seq: 5, Envelope: []byte{1}}); !errors.Is(err, eventlog.CodeSeqConflict) {
		t.Errorf("Store.Shred over a stale head = %v, want %s", err, eventlog.CodeSeqConflict)
	}
	if err := l.Store().Shred(ctx, "s-shred", 2, 5, shred); !errors.Is(err, eventlog.CodeContentMissing) {
		t.Errorf("Store.Shred of a shredded record = %v, want %s", err, eventlog.CodeContentMissing)
	}
	if _, err := eventlog.Verify(ctx, l.Store(), "s-shred"); err != nil {
		t.Errorf("Verify after refused shreds: %v", err)
	}
	if _, err := l.Append(ctx, "s-shred", Sample(eventlog.KindShred, 1, "")); !errors.Is(err, eventlog.CodeEventInvalid) {
		t.Errorf("Append of a shred event = %v, want %s: only Log.Shred records one", err, eventlog.CodeEventInvalid)
	}
}

func testZDR(t testing.TB, h harness) {
	ctx := context.Background()
	l := open(t, h, eventlog.Options{Keys: FixedKeys(t), ZeroDataRetention: true})
	secretish := "rm -rf / --no-preserve-root; error: token expired for account 1234"
	seq, err := l.Append(ctx, "s-zdr", Sample(eventlog.KindToolCall, 1, secretish))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := l.Store().Read(ctx, "s-zdr", 1, 10)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Read: %v %v", recs, err)
	}
	r := recs[0]
	if r.DataKey != nil || r.Sealed != nil {
		t.Errorf("zero-data-retention record holds sealed content")
	}
	bare := sha256.Sum256([]byte(secretish))
	for _, b := range [][]byte{r.Envelope, r.Hash[:]} {
		if bytes.Contains(b, []byte(secretish)) || bytes.Contains(b, bare[:]) {
			t.Errorf("zero-data-retention record holds the content or its bare hash")
		}
	}
	if _, err := l.Content(ctx, "s-zdr", seq); !errors.Is(err, eventlog.CodeContentNotRetained) {
		t.Errorf("Content in a zero-data-retention log: %v, want %s", err, eventlog.CodeContentNotRetained)
	}
	e := readAll(t, l, "s-zdr", 1)
	if len(e) != 1 || e[0].ContentMode != eventlog.ContentDigestOnly || e[0].ContentDigest.IsZero() {
		t.Fatalf("entry = %+v, want digest_only with a digest", e)
	}
	// The envelope is kept whole: the request context (actor, role,
	// tenant, workspace, project, session, channel, request, run, release) and
	// every other envelope field survive without the content.
	if want := Sample(eventlog.KindToolCall, 1, ""); !sameEnvelope(e[0].Event, want) {
		t.Errorf("zero-data-retention entry = %+v, want the envelope of %+v", e[0].Event, want)
	}
	for _, f := range []string{"agent:test", "member", "org-1", "ws-1", "proj-1", "sess-1", "chan-1", "req-1", "run-1", "checkfu@dev"} {
		if !bytes.Contains(r.Envelope, []byte(f)) {
			t.Errorf("zero-data-retention envelope lost the context field %q", f)
		}
	}
	if _, err := eventlog.Verify(ctx, l.Store(), "s-zdr"); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
