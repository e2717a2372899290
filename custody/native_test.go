package custody

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// racingStore replaces the record at a binding right after the next Get
// returns, as a concurrent writer would.
type racingStore struct {
	*MemStore
	race func()
}

func (r *racingStore) Get(ctx context.Context, b Binding) (Record, error) {
	rec, err := r.MemStore.Get(ctx, b)
	if r.race != nil {
		r.race()
		r.race = nil
	}
	return rec, err
}

// Mutant: making Native.Rewrap write with Put instead of CompareAndSwap
// makes TestRewrapNeverOverwritesANewerRecord fail (the newer secret is
// lost).
func TestRewrapNeverOverwritesANewerRecord(t *testing.T) {
	ctx := context.Background()
	v1 := fixedKeyset(t, 1, 1)
	store := &racingStore{MemStore: NewMemStore()}
	b := testBinding()
	if err := NewNative(v1, store).Put(ctx, b, NewSecret([]byte("old"))); err != nil {
		t.Fatal(err)
	}
	v2, err := v1.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	n2 := NewNative(v2, store)
	store.race = func() {
		if err := n2.Put(ctx, b, NewSecret([]byte("new"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := n2.Rewrap(ctx, b); !errors.Is(err, CodeConflict) {
		t.Fatalf("Rewrap racing a Put: %v, want %s", err, CodeConflict)
	}
	s, err := n2.Open(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := revealed(t, s); !bytes.Equal(got, []byte("new")) {
		t.Fatalf("after the race the record holds %q, want the newer %q", got, "new")
	}
}

func TestZeroNativeRefuses(t *testing.T) {
	ctx := context.Background()
	var se *StoreError
	for _, n := range []*Native{nil, {}, NewNative(nil, NewMemStore())} {
		_, err := n.Open(ctx, testBinding())
		if err == nil || (!errors.As(err, &se) && !errors.Is(err, CodeInvalidKeyset)) {
			t.Errorf("Open on %+v: %v", n, err)
		}
		if err := n.Put(ctx, testBinding(), NewSecret([]byte("x"))); err == nil {
			t.Errorf("Put on a zero Native succeeded")
		}
	}
}
