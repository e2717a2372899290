package eventlogtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu/eventlog"
)

// CheckpointKeys returns a fixed note signer named "log.test/eventlog"
// and the verifiers of its checkpoints, for tests and examples. seed
// picks one of 256 fixed keys.
func CheckpointKeys(t testing.TB, seed byte) (note.Signer, note.Verifiers) {
	t.Helper()
	return fixedKey(t, "log.test/eventlog", seed)
}

func fixedKey(t testing.TB, name string, seed byte) (note.Signer, note.Verifiers) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)), name)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := eventlog.NewCheckpointVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return signer, note.VerifierList(verifier)
}

// witnessStore returns the harness's storage as a witness store when it
// is one, else a memory store.
func witnessStore(t testing.TB, h harness) eventlog.WitnessStore {
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	if ws, ok := s.(eventlog.WitnessStore); ok {
		return ws
	}
	return eventlog.NewMemoryStore()
}

// forkAfter returns records keep+1..keep+n of a chain that shares the
// first keep records of recs and then goes its own way: what a writer who
// rolled the log back to keep and appended again would store.
func forkAfter(t testing.TB, session string, recs []eventlog.Record, keep, n int) []eventlog.Record {
	t.Helper()
	ctx := context.Background()
	m := eventlog.NewMemoryStore()
	if err := m.Append(ctx, session, 0, recs[:keep]); err != nil {
		t.Fatal(err)
	}
	forger, err := eventlog.New(m, keyed(t))
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, forger, session, n)
	forked, err := m.Read(ctx, session, uint64(keep)+1, n)
	if err != nil || len(forked) != n {
		t.Fatalf("fork: %d records, %v", len(forked), err)
	}
	return forked
}

// checkpointed appends n events to session in a log that signs
// checkpoints (and submits them to w when w is not nil) and returns the
// log and a checkpoint of its head.
func checkpointed(t testing.TB, h harness, session string, n int, w eventlog.Witness) (*eventlog.Log, []byte) {
	t.Helper()
	signer, _ := CheckpointKeys(t, 1)
	opts := keyed(t)
	opts.Signer, opts.Witness = signer, w
	l := open(t, h, opts)
	appendN(t, l, session, n)
	cp, err := l.Checkpoint(context.Background(), session)
	if err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	return l, cp
}

// testCheckpointTruncated: the newest events of a checkpointed log are
// deleted. The chain alone still verifies; against the checkpoint the log
// is refused.
func testCheckpointTruncated(t testing.TB, h harness) {
	ctx := context.Background()
	_, verifiers := CheckpointKeys(t, 1)
	l, cp := checkpointed(t, h, "s-cp-trunc", 6, nil)
	if head, err := eventlog.VerifyCheckpoint(ctx, l.Store(), "s-cp-trunc", cp, verifiers); err != nil || head.Seq != 6 {
		t.Fatalf("VerifyCheckpoint before truncation = %v, %v", head, err)
	}
	h.Rewrite(t, "s-cp-trunc", func(r []eventlog.Record) []eventlog.Record { return r[:4] })
	if _, err := eventlog.Verify(ctx, l.Store(), "s-cp-trunc"); err != nil {
		t.Fatalf("Verify of a truncated log: %v (the chain alone cannot see truncation)", err)
	}
	_, err := eventlog.VerifyCheckpoint(ctx, l.Store(), "s-cp-trunc", cp, verifiers)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || !errors.Is(err, eventlog.CodeChainBroken) || ce.Seq != 5 || !strings.Contains(ce.Problem, "truncated") {
		t.Errorf("VerifyCheckpoint of a truncated log = %v, want a ChainError at seq 5 saying it was truncated", err)
	}
}

// testCheckpointRolledBack: the log is rolled back to seq 4 and written
// again past its old end, every hash and link fresh. Against the
// checkpoint of the old log it is refused.
func testCheckpointRolledBack(t testing.TB, h harness) {
	ctx := context.Background()
	_, verifiers := CheckpointKeys(t, 1)
	l, cp := checkpointed(t, h, "s-cp-roll", 6, nil)
	h.Rewrite(t, "s-cp-roll", func(r []eventlog.Record) []eventlog.Record {
		return append(r[:4], forkAfter(t, "s-cp-roll", r, 4, 3)...)
	})
	if head, err := eventlog.Verify(ctx, l.Store(), "s-cp-roll"); err != nil || head.Seq != 7 {
		t.Fatalf("Verify of a rolled-back log = %v, %v (the chain alone cannot see a rollback)", head, err)
	}
	_, err := eventlog.VerifyCheckpoint(ctx, l.Store(), "s-cp-roll", cp, verifiers)
	var ce *eventlog.ChainError
	if !errors.As(err, &ce) || ce.Seq != 6 || !strings.Contains(ce.Problem, "rewritten") {
		t.Errorf("VerifyCheckpoint of a rolled-back log = %v, want a ChainError at seq 6 saying it was rewritten", err)
	}
	// A checkpoint of another session, or under an unknown key, proves
	// nothing about this one.
	if _, err := eventlog.VerifyCheckpoint(ctx, l.Store(), "s-other", cp, verifiers); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("VerifyCheckpoint with another session's checkpoint = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
	_, strangers := CheckpointKeys(t, 2)
	if _, err := eventlog.VerifyCheckpoint(ctx, l.Store(), "s-cp-roll", cp, strangers); !errors.Is(err, eventlog.CodeCheckpointInvalid) {
		t.Errorf("VerifyCheckpoint under an unknown key = %v, want %s", err, eventlog.CodeCheckpointInvalid)
	}
}

// testWitnessRefusesRollback: a log whose checkpoints go to a witness
// (kept in the harness's own storage) is truncated, then rolled back: the
// witness refuses both, and keeps what it had.
func testWitnessRefusesRollback(t testing.TB, h harness) {
	ctx := context.Background()
	signer, verifiers := CheckpointKeys(t, 1)
	wsigner, wverifiers := fixedKey(t, "witness.test", 9)
	ws := witnessStore(t, h)
	w, err := eventlog.NewWitness(ws, verifiers, wsigner)
	if err != nil {
		t.Fatal(err)
	}
	const session = "s-witness"
	l, first := checkpointed(t, h, session, 6, w)
	if _, err := note.Open(first, wverifiers); err != nil {
		t.Errorf("the witness did not sign the checkpoint it accepted: %v", err)
	}
	appendN(t, l, session, 2)
	if _, err := l.Checkpoint(ctx, session); err != nil {
		t.Fatalf("Checkpoint at seq 8 through the witness: %v", err)
	}
	origin := signer.Name() + "/" + session
	if st, err := ws.Witnessed(ctx, origin); err != nil || st.Size != 8 {
		t.Fatalf("the witness holds %+v, %v; want size 8", st, err)
	}
	before, err := l.Store().Read(ctx, session, 1, 100)
	if err != nil {
		t.Fatal(err)
	}

	// Truncated to seq 5: the log signs a smaller checkpoint, which the
	// witness refuses whatever old size it is told.
	h.Rewrite(t, session, func(r []eventlog.Record) []eventlog.Record { return r[:5] })
	if _, err := l.Checkpoint(ctx, session); !errors.Is(err, eventlog.CodeCheckpointRollback) {
		t.Errorf("Checkpoint of a truncated log through the witness = %v, want %s", err, eventlog.CodeCheckpointRollback)
	}
	short, err := eventlog.SignCheckpoint(signer, session, eventlog.Head{Seq: 5, Hash: before[4].Hash})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(ctx, 8, nil, short); !errors.Is(err, eventlog.CodeCheckpointRollback) {
		t.Errorf("AddCheckpoint(old 8, size 5) = %v, want %s", err, eventlog.CodeCheckpointRollback)
	}
	var conflict *eventlog.CheckpointConflict
	if _, err := w.AddCheckpoint(ctx, 5, nil, short); !errors.As(err, &conflict) || conflict.Size != 8 || !errors.Is(err, eventlog.CodeCheckpointConflict) {
		t.Errorf("AddCheckpoint(old 5) = %v, want a CheckpointConflict at size 8", err)
	}

	// Rolled back to seq 5 and written again to seq 9: the proof from
	// seq 8 does not link to what the witness holds.
	h.Rewrite(t, session, func(r []eventlog.Record) []eventlog.Record {
		return append(r[:5], forkAfter(t, session, before, 5, 4)...)
	})
	if _, err := eventlog.Verify(ctx, l.Store(), session); err != nil {
		t.Fatalf("Verify of the rolled-back log: %v", err)
	}
	if _, err := l.Checkpoint(ctx, session); !errors.Is(err, eventlog.CodeCheckpointInconsistent) {
		t.Errorf("Checkpoint of a rolled-back log through the witness = %v, want %s", err, eventlog.CodeCheckpointInconsistent)
	}
	// The same size as witnessed, with another head: a fork.
	forked, _ := l.Store().Read(ctx, session, 8, 1)
	fork, _ := eventlog.SignCheckpoint(signer, session, eventlog.Head{Seq: 8, Hash: forked[0].Hash})
	if _, err := w.AddCheckpoint(ctx, 8, nil, fork); !errors.Is(err, eventlog.CodeCheckpointRollback) {
		t.Errorf("AddCheckpoint of a fork at the witnessed size = %v, want %s", err, eventlog.CodeCheckpointRollback)
	}
	if st, err := ws.Witnessed(ctx, origin); err != nil || st.Size != 8 || st.Hash != before[7].Hash {
		t.Errorf("after refusals the witness holds %+v, %v; want size 8 and the original head", st, err)
	}
}

// testWitnessProof checks the witness's proof rules directly: a proof
// of the wrong length, from another session, or out of order is refused.
func testWitnessProof(t testing.TB, h harness) {
	ctx := context.Background()
	signer, verifiers := CheckpointKeys(t, 1)
	w, err := eventlog.NewWitness(witnessStore(t, h), verifiers, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, h, keyed(t))
	head := appendN(t, l, "s-proof", 3)
	recs, _ := l.Store().Read(ctx, "s-proof", 1, 10)
	cp3, _ := eventlog.SignCheckpoint(signer, "s-proof", head)
	// A first checkpoint with a proof from seq 1 is checked too.
	if _, err := w.AddCheckpoint(ctx, 0, [][]byte{recs[0].Envelope, recs[2].Envelope, recs[1].Envelope}, cp3); !errors.Is(err, eventlog.CodeCheckpointInconsistent) {
		t.Errorf("first checkpoint with a reordered proof = %v, want %s", err, eventlog.CodeCheckpointInconsistent)
	}
	if got, err := w.AddCheckpoint(ctx, 0, nil, cp3); err != nil || !bytes.Equal(got, cp3) {
		t.Fatalf("first checkpoint = %q, %v", got, err)
	}
	head = appendN(t, l, "s-proof", 2)
	cp5, _ := eventlog.SignCheckpoint(signer, "s-proof", head)
	proof, err := eventlog.Proof(ctx, l.Store(), "s-proof", 3, 5)
	if err != nil || len(proof) != 2 {
		t.Fatalf("Proof(3, 5) = %d envelopes, %v", len(proof), err)
	}
	other := appendN(t, open(t, h, keyed(t)), "s-proof-other", 5)
	otherProof, _ := eventlog.Proof(ctx, l.Store(), "s-proof-other", 3, 5)
	_ = other
	for name, p := range map[string][][]byte{
		"short":         proof[:1],
		"long":          append(proof, proof[1]),
		"swapped":       {proof[1], proof[0]},
		"other session": otherProof,
		"garbage":       {[]byte("x"), proof[1]},
	} {
		if _, err := w.AddCheckpoint(ctx, 3, p, cp5); !errors.Is(err, eventlog.CodeCheckpointInconsistent) {
			t.Errorf("%s proof: %v, want %s", name, err, eventlog.CodeCheckpointInconsistent)
		}
	}
	// The true proof, for a checkpoint signed over another head.
	wrongHead, _ := eventlog.SignCheckpoint(signer, "s-proof", eventlog.Head{Seq: 5, Hash: eventlog.Hash{5}})
	if _, err := w.AddCheckpoint(ctx, 3, proof, wrongHead); !errors.Is(err, eventlog.CodeCheckpointInconsistent) {
		t.Errorf("a proof that does not end at the checkpoint's head: %v, want %s", err, eventlog.CodeCheckpointInconsistent)
	}
	if _, err := w.AddCheckpoint(ctx, 3, proof, cp5); err != nil {
		t.Errorf("the true proof: %v", err)
	}
	if _, err := w.AddCheckpoint(ctx, 5, nil, cp5); err != nil {
		t.Errorf("the witnessed checkpoint again: %v", err)
	}
}

// TestWitnessStore checks a [eventlog.WitnessStore]: open is called for
// each handle, and every handle must see the same state. It checks the
// compare-and-swap of Witness, its refusal of a stale prev with nothing
// changed, and that of many concurrent calls from one prev exactly one
// wins.
func TestWitnessStore[T testing.TB](t T, open func(t T) eventlog.WitnessStore) {
	ctx := context.Background()
	a, b := open(t), open(t)
	const origin = "log.test/eventlog/s"
	if st, err := a.Witnessed(ctx, origin); err != nil || st.Size != 0 || st.Checkpoint != nil {
		t.Fatalf("Witnessed(new origin) = %+v, %v; want the zero state", st, err)
	}
	s1 := eventlog.WitnessState{Size: 3, Hash: eventlog.Hash{3}, Checkpoint: []byte("cp3")}
	s2 := eventlog.WitnessState{Size: 7, Hash: eventlog.Hash{7}, Checkpoint: []byte("cp7")}
	if err := a.Witness(ctx, origin, eventlog.WitnessState{}, s1); err != nil {
		t.Fatalf("Witness(zero -> 3): %v", err)
	}
	for name, prev := range map[string]eventlog.WitnessState{
		"zero":       {},
		"wrong size": {Size: 2, Hash: s1.Hash},
		"wrong hash": {Size: 3, Hash: eventlog.Hash{4}},
	} {
		if err := b.Witness(ctx, origin, prev, s2); !errors.Is(err, eventlog.CodeCheckpointConflict) {
			t.Errorf("Witness from a stale prev (%s) = %v, want %s", name, err, eventlog.CodeCheckpointConflict)
		}
	}
	if st, err := b.Witnessed(ctx, origin); err != nil || st.Size != 3 || st.Hash != s1.Hash || string(st.Checkpoint) != "cp3" {
		t.Fatalf("another handle sees %+v, %v; want size 3", st, err)
	}
	if err := b.Witness(ctx, origin, s1, s2); err != nil {
		t.Fatalf("Witness(3 -> 7): %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		h := a
		if i%2 == 1 {
			h = b
		}
		wg.Go(func() {
			next := eventlog.WitnessState{Size: 8 + uint64(i), Hash: eventlog.Hash{byte(i)}, Checkpoint: []byte{byte(i)}}
			err := h.Witness(ctx, origin, s2, next)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, eventlog.CodeCheckpointConflict):
				t.Errorf("concurrent Witness: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d concurrent Witness calls from one prev succeeded, want exactly 1", wins)
	}
	if st, _ := a.Witnessed(ctx, "log.test/eventlog/other"); st.Size != 0 {
		t.Errorf("another origin holds %+v", st)
	}
}
