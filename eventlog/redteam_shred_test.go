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
// (every byte of which is computable without a key), and Verify, Content
// and a later checkpoint take it for a shred. What a shred event proves
// is that the deletion was recorded, not who recorded it. If this test
// fails, shred events became authenticated: update the docs.
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
	if _, err := l.Content(ctx, "s", 2); !errors.Is(err, eventlog.CodeContentShredded) {
		t.Errorf("Content of the forged shred's target = %v; the docs say %s", err, eventlog.CodeContentShredded)
	}
}
