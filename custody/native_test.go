package custody

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// racingStore replaces the record at a binding right after the next Get
// returns, as a concurrent writer would.
type racingStore struct {
	*MemoryStore
	race func()
}

func (r *racingStore) Get(ctx context.Context, b Binding) (Record, error) {
	rec, err := r.MemoryStore.Get(ctx, b)
	if r.race != nil {
		r.race()
		r.race = nil
	}
	return rec, err
}

func TestRewrapNeverOverwritesANewerRecord(t *testing.T) {
	ctx := context.Background()
	v1 := fixedKeyset(t, 1, 1)
	store := &racingStore{MemoryStore: NewMemoryStore()}
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
	if err := n2.Rewrap(ctx, b); !errors.Is(err, CodeRecordConflict) {
		t.Fatalf("Rewrap racing a Put: %v, want %s", err, CodeRecordConflict)
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
	for _, n := range []*Native{nil, {}, NewNative(nil, NewMemoryStore())} {
		_, err := n.Open(ctx, testBinding())
		if err == nil || (!errors.As(err, &se) && !errors.Is(err, CodeKeysetInvalid)) {
			t.Errorf("Open on %+v: %v", n, err)
		}
		if err := n.Put(ctx, testBinding(), NewSecret([]byte("x"))); err == nil {
			t.Errorf("Put on a zero Native succeeded")
		}
	}
}

// foldingStore matches namespaces case-insensitively, as a store on a
// case-insensitive collation would, and returns the row it found.
type foldingStore struct{ *MemoryStore }

func (f foldingStore) Get(ctx context.Context, b Binding) (Record, error) {
	b.Namespace = strings.ToLower(b.Namespace)
	return f.MemoryStore.Get(ctx, b)
}

func TestNativeRefusesAnotherRowsRecord(t *testing.T) {
	ctx := context.Background()
	ks := fixedKeyset(t, 1, 1)
	n := NewNative(ks, foldingStore{NewMemoryStore()})
	acme := testBinding()
	acme.Namespace = "acme"
	if err := n.Put(ctx, acme, NewSecret([]byte("acme-token"))); err != nil {
		t.Fatal(err)
	}
	other := acme
	other.Namespace = "Acme"
	if s, err := n.Open(ctx, other); !errors.Is(err, CodeAddressMismatch) {
		t.Fatalf("Open(%s) = %v, %v; want %s", other, s, err, CodeAddressMismatch)
	}
	rotated, err := ks.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if err := NewNative(rotated, n.store).Rewrap(ctx, other); !errors.Is(err, CodeAddressMismatch) {
		t.Fatalf("Rewrap(%s) = %v, want %s", other, err, CodeAddressMismatch)
	}
	if _, err := n.Open(ctx, acme); err != nil {
		t.Fatalf("Open at the record's own address: %v", err)
	}
}
