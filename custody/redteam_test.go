package custody

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/internal/alloctest"
)

// The red team of custody's secret at rest (docs/changes/wt-rtstore.md):
// a database writer (rows tampered, swapped, rolled back, oversized) and a
// caller passing hostile sizes.

// TestSealBoundsTheSecret: a Secret of exactly MaxSecretBytes seals and
// opens; one byte more is refused with CodeSecretTooLarge, by Seal and by
// Native.Put, and nothing is stored.
func TestSealBoundsTheSecret(t *testing.T) {
	ks := fixedKeyset(t, 1, 1)
	b := testBinding()
	edge := bytes.Repeat([]byte{'k'}, MaxSecretBytes)
	sealed, err := ks.Seal(b, NewSecret(bytes.Clone(edge)))
	if err != nil {
		t.Fatalf("Seal of MaxSecretBytes: %v", err)
	}
	if len(sealed) != MaxSealedBytes {
		t.Fatalf("a sealed Secret of MaxSecretBytes has %d bytes, MaxSealedBytes is %d", len(sealed), MaxSealedBytes)
	}
	s, err := ks.Open(b, sealed)
	if err != nil {
		t.Fatalf("Open of MaxSealedBytes: %v", err)
	}
	if err := s.reveal(func(p []byte) error {
		if !bytes.Equal(p, edge) {
			return errors.New("the plaintext changed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Rewrap(b, sealed); err != nil {
		t.Fatalf("Rewrap of MaxSealedBytes: %v", err)
	}
	over := NewSecret(make([]byte, MaxSecretBytes+1))
	if _, err := ks.Seal(b, over); !errors.Is(err, CodeSecretTooLarge) {
		t.Fatalf("Seal of MaxSecretBytes+1: %v, want %s", err, CodeSecretTooLarge)
	}
	store := NewMemoryStore()
	n := NewNative(ks, store)
	if err := n.Put(context.Background(), b, over); !errors.Is(err, CodeSecretTooLarge) {
		t.Fatalf("Native.Put of MaxSecretBytes+1: %v, want %s", err, CodeSecretTooLarge)
	}
	if _, err := store.Get(context.Background(), b); !errors.Is(err, CodeRecordNotFound) {
		t.Fatalf("after the refused Put the store holds: %v", err)
	}
	if over.Destroyed() {
		t.Fatal("a refused Seal destroyed the caller's Secret")
	}
}

// TestOpenBoundsTheRecord: a record longer than MaxSealedBytes (a
// database writer's oversized row, with a valid header) is refused with
// CodeRecordMalformed by Open and Rewrap, without allocating a Secret of
// its size. TotalAlloc counts the whole process, so the test runs alone
// in a child process (alloctest.Alone).
func TestOpenBoundsTheRecord(t *testing.T) {
	if !alloctest.Alone(t) {
		return
	}
	ks := fixedKeyset(t, 1, 1)
	b := testBinding()
	for _, size := range []int{MaxSealedBytes + 1, 16 << 20} {
		rec := make([]byte, size)
		rec[0] = sealFormat
		binary.BigEndian.PutUint32(rec[1:5], 1)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ks.Open(b, rec)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, CodeRecordMalformed) {
			t.Fatalf("Open of a %d-byte record: %v, want %s", size, err, CodeRecordMalformed)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("Open of a %d-byte record allocated %d bytes before refusing it", size, grew)
		}
		if _, err := ks.Rewrap(b, rec); !errors.Is(err, CodeRecordMalformed) {
			t.Fatalf("Rewrap of a %d-byte record: %v, want %s", size, err, CodeRecordMalformed)
		}
	}
}

// TestRollbackStillOpens reproduces the open limit SECURITY.md states
// (docs/threat-model-tests.md, R1): a database writer who kept an older
// sealed record of the same binding and key version puts it back, and it
// opens, to the older credential. If this test ever fails, the record
// gained a version and SECURITY.md's "open" line must change with it.
func TestRollbackStillOpens(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	n := NewNative(fixedKeyset(t, 1, 1), store)
	b := testBinding()
	if err := n.Put(ctx, b, NewSecret([]byte("old-token"))); err != nil {
		t.Fatal(err)
	}
	old, err := store.Get(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Put(ctx, b, NewSecret([]byte("new-token"))); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, old); err != nil {
		t.Fatal(err)
	}
	s, err := n.Open(ctx, b)
	if err != nil {
		t.Fatalf("the rolled-back record no longer opens (%v): update SECURITY.md's open line", err)
	}
	defer s.Destroy()
	if err := s.reveal(func(p []byte) error {
		if string(p) != "old-token" {
			return fmt.Errorf("opened %d bytes, not the old token", len(p))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSecretInPanicsAndErrors: a Secret as a panic value, wrapped in an
// error by %v and %w's neighbours, or joined: no form of it appears.
func TestSecretInPanicsAndErrors(t *testing.T) {
	s := newTestSecret()
	func() {
		defer func() {
			r := recover()
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
				assertNoLeak(t, "panic value "+verb, fmt.Sprintf(verb, r))
			}
		}()
		panic(s)
	}()
	func() {
		defer func() { assertNoLeak(t, "panic by value", fmt.Sprint(recover())) }()
		panic(*s)
	}()
	err := fmt.Errorf("wrapping %v %+v %#v %s %q %x: %w", s, s, s, s, s, s, errors.New("cause"))
	assertNoLeak(t, "fmt.Errorf", err.Error())
	assertNoLeak(t, "errors.Join", errors.Join(err, fmt.Errorf("%v", *s)).Error())
}

// TestUnrecoveredPanicPrintsNoSecret: a Secret (by pointer, by value, in
// a struct) as the value of a panic nobody recovers, whose message the Go
// runtime prints itself, with a traceback of every goroutine
// (GOTRACEBACK=all), to stderr: no form of it appears.
func TestUnrecoveredPanicPrintsNoSecret(t *testing.T) {
	if kind := os.Getenv("CHECKFU_SECRET_PANIC"); kind != "" {
		s := newTestSecret()
		switch kind {
		case "pointer":
			panic(s)
		case "value":
			panic(*s)
		case "struct":
			panic(holder{name: "h", p: s, any: s})
		}
		return
	}
	for _, kind := range []string{"pointer", "value", "struct"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnrecoveredPanicPrintsNoSecret$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CHECKFU_SECRET_PANIC="+kind, "GOTRACEBACK=all")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "panic: ") {
			t.Fatalf("%s: the child did not panic: %v\n%s", kind, err, out)
		}
		assertNoLeak(t, "runtime panic of a Secret by "+kind, string(out))
	}
}

// TestSecretUseRacesDestroy: reveal, Seal and Destroy of one Secret from
// many goroutines (run with -race): each use sees the whole bytes or
// is refused with CodeSecretDestroyed, never a torn or zeroed copy.
func TestSecretUseRacesDestroy(t *testing.T) {
	ks := fixedKeyset(t, 1, 1)
	b := testBinding()
	for range 50 {
		s := newTestSecret()
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 4 {
					s.Destroy()
					return
				}
				if i%2 == 0 {
					sealed, err := ks.Seal(b, s)
					if err == nil {
						o, err := ks.Open(b, sealed)
						if err != nil {
							t.Error(err)
							return
						}
						_ = o.reveal(func(p []byte) error {
							if string(p) != testCanary {
								t.Errorf("sealed while destroyed: %d bytes opened", len(p))
							}
							return nil
						})
						return
					}
					if !errors.Is(err, CodeSecretDestroyed) {
						t.Error(err)
					}
					return
				}
				err := s.reveal(func(p []byte) error {
					if string(p) != testCanary {
						t.Errorf("revealed %q", strings.Repeat("?", len(p)))
					}
					return nil
				})
				if err != nil && !errors.Is(err, CodeSecretDestroyed) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
}

// TestMemoryStoreListBound: a namespace of exactly MaxListBindings
// records lists whole; one more is a *StoreError (the SQL stores:
// sqlrecordstest.TestManyRows).
func TestMemoryStoreListBound(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	put := func() {
		b := testBinding()
		b.Handle = address.NewHandle()
		if err := s.Put(ctx, Record{Binding: b, Sealed: []byte{1}}); err != nil {
			t.Fatal(err)
		}
	}
	for range MaxListBindings {
		put()
	}
	if bs, err := s.List(ctx, testBinding().Namespace); err != nil || len(bs) != MaxListBindings {
		t.Fatalf("List of MaxListBindings records = %d, %v", len(bs), err)
	}
	put()
	var se *StoreError
	if bs, err := s.List(ctx, testBinding().Namespace); !errors.As(err, &se) {
		t.Fatalf("List of MaxListBindings+1 records = %d, %v; want *StoreError", len(bs), err)
	}
}
