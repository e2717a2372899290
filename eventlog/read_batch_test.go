package eventlog_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// limitStore records the largest limit a reader asked one Read for.
type limitStore struct {
	eventlog.Store
	max atomic.Int64
}

func (s *limitStore) Read(ctx context.Context, session string, from uint64, limit int) ([]eventlog.Record, error) {
	for {
		m := s.max.Load()
		if int64(limit) <= m || s.max.CompareAndSwap(m, int64(limit)) {
			break
		}
	}
	return s.Store.Read(ctx, session, from, limit)
}

// maxBatchContent is the most sealed content one store read may bring
// into memory when every event carries MaxContent.
const maxBatchContent = 128 << 20

// Verify and Read hold one store batch in memory, content included. A log
// whose events each carry up to MaxContent (tool outputs) must not make a
// batch of thousands of them, gigabytes, land in memory at once.
func TestReadBatchesBoundContentInMemory(t *testing.T) {
	store := &limitStore{Store: eventlog.NewMemoryStore()}
	l, err := eventlog.New(store, eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		if _, err := l.Append(ctx, "s", eventlogtest.Sample(eventlog.KindToolCall, 1, "out")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eventlog.Verify(ctx, store, "s"); err != nil {
		t.Fatal(err)
	}
	for _, err := range l.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range l.Read(ctx, "s", 9000) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := store.max.Load() * eventlog.MaxContent; got > maxBatchContent {
		t.Fatalf("one store read may return %d MiB of content, more than %d MiB", got>>20, maxBatchContent>>20)
	}
}
