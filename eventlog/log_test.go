package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// countingStore counts store appends and can hold the first one.
type countingStore struct {
	*eventlog.MemoryStore
	appends atomic.Int32
	hold    chan struct{} // the first Append waits for it to close
	held    chan struct{} // closed when the first Append is waiting
}

func (c *countingStore) Append(ctx context.Context, session string, expected uint64, recs []eventlog.Record) error {
	if c.appends.Add(1) == 1 && c.hold != nil {
		close(c.held)
		<-c.hold
	}
	return c.MemoryStore.Append(ctx, session, expected, recs)
}

func TestGroupCommit(t *testing.T) {
	store := &countingStore{MemoryStore: eventlog.NewMemoryStore(), hold: make(chan struct{}), held: make(chan struct{})}
	l, err := eventlog.New(store, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	seqs := make(chan uint64, 50)
	appendOne := func() {
		seq, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall})
		if err != nil {
			t.Error(err)
		}
		seqs <- seq
	}
	wg.Go(appendOne)
	<-store.held // the first commit is in the store
	for range 49 {
		wg.Go(appendOne)
	}
	for eventlog.Waiting(l, "s") < 49 {
		runtime.Gosched()
	}
	close(store.hold)
	wg.Wait()
	close(seqs)
	seen := map[uint64]bool{}
	for s := range seqs {
		seen[s] = true
	}
	if len(seen) != 50 {
		t.Errorf("%d distinct seqs, want 50", len(seen))
	}
	if n := store.appends.Load(); n != 2 {
		t.Errorf("50 concurrent appends took %d store transactions, want 2 (one held, one group)", n)
	}
}

func TestAppendRetriesOverAnotherWriter(t *testing.T) {
	store := eventlog.NewMemoryStore()
	a, _ := eventlog.New(store, eventlog.Options{})
	b, _ := eventlog.New(store, eventlog.Options{})
	ctx := context.Background()
	for i := range 6 {
		w := a
		if i%2 == 1 {
			w = b // b's cached head is stale every time
		}
		seq, err := w.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSettlement})
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("append %d = %d, %v", i, seq, err)
		}
	}
	if _, err := eventlog.Verify(ctx, store, "s"); err != nil {
		t.Fatal(err)
	}
}

func TestNewRefuses(t *testing.T) {
	s := eventlog.NewMemoryStore()
	if _, err := eventlog.New(s, eventlog.Options{ZeroDataRetention: true}); !errors.Is(err, eventlog.CodeContentKeyMissing) {
		t.Errorf("New(ZDR without keys) = %v, want %s", err, eventlog.CodeContentKeyMissing)
	}
	if _, err := eventlog.New(s, eventlog.Options{Keys: &eventlog.Keys{}}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("New(zero Keys) = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	l, _ := eventlog.New(s, eventlog.Options{})
	if _, err := l.Append(context.Background(), "s", eventlog.Event{Kind: eventlog.KindToolCall, Content: []byte("x")}); !errors.Is(err, eventlog.CodeContentKeyMissing) {
		t.Errorf("Append(content, no keys) = %v, want %s", err, eventlog.CodeContentKeyMissing)
	}
	seq, _ := l.Append(context.Background(), "s", eventlog.Event{Kind: eventlog.KindToolCall})
	if _, err := l.Content(context.Background(), "s", seq); !errors.Is(err, eventlog.CodeContentMissing) {
		t.Errorf("Content(no content) = %v, want %s", err, eventlog.CodeContentMissing)
	}
}

func TestFollowFromTheFuture(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, _ := eventlog.New(eventlog.NewMemoryStore(), eventlog.Options{})
	got := make(chan uint64)
	go func() {
		for e, err := range l.Follow(ctx, "s", 3) {
			if err != nil {
				close(got)
				return
			}
			got <- e.Seq
		}
	}()
	for range 4 {
		if _, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip}); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := <-got, <-got; a != 3 || b != 4 {
		t.Errorf("Follow from 3 yielded %d, %d; want 3, 4", a, b)
	}
}

// waitSpy records the seq of the first Wait and ends it with the
// follower's context cancelled, so that Follow ends at its first wait.
type waitSpy struct {
	*eventlog.MemoryStore
	cancel context.CancelFunc
	first  atomic.Uint64
}

func (w *waitSpy) Wait(ctx context.Context, session string, seq uint64) error {
	w.first.CompareAndSwap(0, seq)
	w.cancel()
	return ctx.Err()
}

// TestFollowFromFarBeyondTheEnd follows from a seq so large that the
// distance to it does not fit an int: Follow must read the log that
// exists and then wait for the first seq it lacks.
func TestFollowFromFarBeyondTheEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spy := &waitSpy{MemoryStore: eventlog.NewMemoryStore(), cancel: cancel}
	l, _ := eventlog.New(spy, eventlog.Options{})
	for range 2 {
		if _, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindSkip}); err != nil {
			t.Fatal(err)
		}
	}
	for e, err := range l.Follow(ctx, "s", 1<<64-1) {
		if err == nil {
			t.Fatalf("Follow from 2^64-1 yielded seq %d", e.Seq)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Follow ended with %v, want context.Canceled", err)
		}
	}
	if got := spy.first.Load(); got != 3 {
		t.Errorf("Follow first waited for seq %d, want 3 (the first seq the log lacks)", got)
	}
}

func TestKeysNeverPrint(t *testing.T) {
	master := bytes.Repeat([]byte{0xA5}, eventlog.KeySize)
	keys, err := eventlog.NewKeys(master)
	if err != nil {
		t.Fatal(err)
	}
	holder := struct {
		K    *eventlog.Keys
		opts eventlog.Options
	}{keys, eventlog.Options{Keys: keys}}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, keys), fmt.Sprintf(verb, holder))
	}
	j, _ := json.Marshal(holder)
	outs = append(outs, string(j))
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("x", "keys", keys)
	outs = append(outs, logBuf.String())
	keyish := regexp.MustCompile(`[0-9a-fA-F]{32}|[A-Za-z0-9+/]{40}`)
	for _, out := range outs {
		if strings.Contains(strings.ToLower(out), "a5a5") || strings.Contains(out, "\xa5\xa5") || keyish.MatchString(out) {
			t.Errorf("key bytes printed: %q", out)
		}
	}
	for _, verb := range []string{"%v", "%s", "%x", "%q", "%#v"} {
		if got := fmt.Sprintf(verb, keys); got != "eventlog.Keys(redacted)" {
			t.Errorf("Sprintf(%q, keys) = %q, want eventlog.Keys(redacted)", verb, got)
		}
	}
}

// TestEnvelopeTypesHoldNoArbitraryValues walks the durable types: no
// interface, map, chan or func fields that could carry an arbitrary value
// (a secret) into the log, and no path to Keys.
func TestEnvelopeTypesHoldNoArbitraryValues(t *testing.T) {
	keysType := reflect.TypeFor[eventlog.Keys]()
	var walk func(path string, ty reflect.Type, seen map[reflect.Type]bool)
	walk = func(path string, ty reflect.Type, seen map[reflect.Type]bool) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Interface, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Errorf("%s is a %s: it could hold anything", path, ty.Kind())
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path+"[]", ty.Elem(), seen)
		case reflect.Struct:
			if ty == keysType {
				t.Errorf("%s reaches eventlog.Keys", path)
			}
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(path+"."+f.Name, f.Type, seen)
			}
		}
	}
	for _, ty := range []reflect.Type{
		reflect.TypeFor[eventlog.Event](), reflect.TypeFor[eventlog.Entry](),
		reflect.TypeFor[eventlog.Record](), reflect.TypeFor[eventlog.Head](),
	} {
		walk(ty.Name(), ty, map[reflect.Type]bool{reflect.TypeFor[struct{}](): false})
	}
}

var _ = eventlogtest.Sample

// TestLogWithoutStoreRefuses: New without a store, the zero Log and a nil
// *Log refuse every call with CodeStoreMissing instead of panicking.
func TestLogWithoutStoreRefuses(t *testing.T) {
	ctx := context.Background()
	if _, err := eventlog.New(nil, eventlog.Options{}); !errors.Is(err, eventlog.CodeStoreMissing) {
		t.Errorf("New(nil) = %v, want %s", err, eventlog.CodeStoreMissing)
	}
	if _, err := eventlog.Verify(ctx, nil, "s"); !errors.Is(err, eventlog.CodeStoreMissing) {
		t.Errorf("Verify(nil store) = %v, want %s", err, eventlog.CodeStoreMissing)
	}
	for name, l := range map[string]*eventlog.Log{"zero": {}, "nil": nil} {
		calls := map[string]func() error{
			"Append": func() error { _, err := l.Append(ctx, "s", eventlog.Event{Kind: eventlog.KindToolCall}); return err },
			"AppendAt": func() error {
				_, err := l.AppendAt(ctx, "s", 0, eventlog.Event{Kind: eventlog.KindToolCall})
				return err
			},
			"AppendAt none": func() error {
				_, err := l.AppendAt(ctx, "s", 0)
				return err
			},
			"Head":       func() error { _, err := l.Head(ctx, "s"); return err },
			"Checkpoint": func() error { _, err := l.Checkpoint(ctx, "s"); return err },
			"Shred":      func() error { return l.Shred(ctx, "s", 1) },
			"Content":    func() error { _, err := l.Content(ctx, "s", 1); return err },
			"Read": func() error {
				for _, err := range l.Read(ctx, "s", 1) {
					return err
				}
				return nil
			},
			"Follow": func() error {
				for _, err := range l.Follow(ctx, "s", 1) {
					return err
				}
				return nil
			},
		}
		for call, f := range calls {
			if err := f(); !errors.Is(err, eventlog.CodeStoreMissing) {
				t.Errorf("%s Log: %s = %v, want %s", name, call, err, eventlog.CodeStoreMissing)
			}
		}
		if l.Store() != nil {
			t.Errorf("%s Log: Store() is not nil", name)
		}
	}
}
