package eventlog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// TestForgedShredEventPassesVerify pins a limit docs/eventlog.md states:
// the chain is not keyed, so whoever can write the store can delete a
// content row, mark it shredded and append a shred event naming it
// (every envelope byte is computable without a key but the shred
// event's tag), and the keyless Verify takes it for a shred. Only a
// verifier with the log's keys (Log.Verify, Log.Content, Log.Read)
// refuses it: TestForgedShredEventRefusedWithKeys. If this test fails,
// the keyless Verify learned to tell them apart: update the docs.
func TestForgedShredEventPassesVerify(t *testing.T) {
	ctx := context.Background()
	m := eventlog.NewMemoryStore()
	l, err := eventlog.New(m, eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Append(ctx, "s", contentEvent()); err != nil {
			t.Fatal(err)
		}
	}
	eventlog.RewriteMemory(m, "s", func(recs []eventlog.Record) []eventlog.Record {
		enc, h := eventlog.ForgeShredEnvelope("s", 4, recs[2].Hash, 2)
		recs[1].DataKey, recs[1].Sealed, recs[1].ShreddedBy = nil, nil, 4
		return append(recs, eventlog.Record{Seq: 4, Envelope: enc, Hash: h})
	})
	if _, err := eventlog.Verify(ctx, m, "s"); err != nil {
		t.Errorf("Verify of a log with a forged shred = %v; the docs say it passes", err)
	}
	bare, _ := eventlog.New(m, eventlog.Options{})
	if _, err := bare.Content(ctx, "s", 2); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content without keys of the forged shred's target = %v; the docs say %s", err, eventlog.CodeContentShredded)
	}
}

// TestForgedShredEventRefusedWithKeys: with the log's keys, Log.Verify,
// Log.Content, Log.Read and Log.Checkpoint refuse the forged shred
// event of TestForgedShredEventPassesVerify, and accept a real one.
func TestForgedShredEventRefusedWithKeys(t *testing.T) {
	ctx := context.Background()
	m := eventlog.NewMemoryStore()
	signer, _ := eventlogtest.CheckpointKeys(t, 1)
	l, err := eventlog.New(m, eventlog.Options{Keys: eventlogtest.FixedKeys(t), Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Append(ctx, "s", contentEvent()); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Shred(ctx, "s", 1); err != nil { // a real shred, seq 4
		t.Fatal(err)
	}
	if _, err := l.Verify(ctx, "s"); err != nil {
		t.Fatalf("Log.Verify after a real shred = %v", err)
	}
	eventlog.RewriteMemory(m, "s", func(recs []eventlog.Record) []eventlog.Record {
		enc, h := eventlog.ForgeShredEnvelope("s", 5, recs[3].Hash, 2)
		recs[1].DataKey, recs[1].Sealed, recs[1].ShreddedBy = nil, nil, 5
		return append(recs, eventlog.Record{Seq: 5, Envelope: enc, Hash: h})
	})
	var ce *eventlog.ChainError
	if _, err := l.Verify(ctx, "s"); !errors.As(err, &ce) || ce.Seq != 2 {
		t.Errorf("Log.Verify of a forged shred = %v, want a chain error at seq 2", err)
	}
	if _, err := l.Content(ctx, "s", 2); !errors.As(err, &ce) || ce.Seq != 2 {
		t.Errorf("Content of the forged shred's target = %v, want a chain error at seq 2", err)
	}
	if _, err := l.Content(ctx, "s", 1); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content of the real shred's target = %v, want %s", err, eventlog.CodeContentShredded)
	}
	var readErr error
	for _, err := range l.Read(ctx, "s", 1) {
		if err != nil {
			readErr = err
		}
	}
	if !errors.As(readErr, &ce) {
		t.Errorf("Read over a forged shred ended with %v, want a chain error", readErr)
	}
	if _, err := l.Checkpoint(ctx, "s"); !errors.As(err, &ce) {
		t.Errorf("Checkpoint over a forged shred = %v, want a chain error", err)
	}
	// Without keys, Shred refuses rather than append an unauthenticated
	// shred event.
	bare, _ := eventlog.New(m, eventlog.Options{})
	if err := bare.Shred(ctx, "s", 3); !errors.Is(err, eventlog.CodeContentKeyMissing) {
		t.Errorf("Shred without keys = %v, want %s", err, eventlog.CodeContentKeyMissing)
	}
}
