// Package sqlrecordstest holds the tests every SQL custody store runs
// against its own table, beyond custodytest's conformance suite: an
// attacker with write access to the database moves a row or writes a
// corrupt one, and the store must not let either pass for a good record;
// and racing CompareAndSwaps from one old value, of which exactly one may
// win.
package sqlrecordstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/custodytest"
)

// A Harness is a fresh, empty store and raw SQL access to its table.
type Harness struct {
	Store custody.Store
	// Table is the table's name as the store's SQL spells it.
	Table string
	// Exec runs a statement ($1, $2, ... parameters) beside the store,
	// as an attacker with write access to the database would.
	Exec func(query string, args ...any) error
}

// TestRawRowMove moves a row by rewriting its key columns in SQL, for
// each key column and for a boundary shift between namespace and
// integration: the moved row is listed at its new address, opening it
// there is refused with custody.CodeAddressMismatch, and nothing opens at
// the old address.
func TestRawRowMove(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	newHandle := address.NewHandle().String()
	moves := []struct {
		name, set string
		args      []any
		namespace string // where the moved row is listed
	}{
		{"namespace", `namespace = 'other'`, nil, "other"},
		{"integration", `integration = 'gitlab'`, nil, "github"},
		{"handle", `handle = $1`, []any{newHandle}, "github"},
		{"boundary-shift", `namespace = 'githubdeploy-', integration = 'token'`, nil, "githubdeploy-"},
	}
	for _, m := range moves {
		t.Run(m.name, func(t *testing.T) {
			h := open(t)
			n := custody.NewNative(custody.GenerateKeyset(), h.Store)
			home := custodytest.NewBinding("github", "deploy-token")
			if err := n.Put(ctx, home, custody.NewSecret([]byte("raw-move-canary-123"))); err != nil {
				t.Fatal(err)
			}
			if err := h.Exec(`UPDATE `+h.Table+` SET `+m.set, m.args...); err != nil {
				t.Fatal(err)
			}
			bs, err := h.Store.List(ctx, m.namespace)
			if err != nil || len(bs) != 1 {
				t.Fatalf("List(%q) after the move = %v, %v", m.namespace, bs, err)
			}
			_, err = n.Open(ctx, bs[0])
			if !errors.Is(err, custody.CodeAddressMismatch) {
				t.Fatalf("Open of the moved row at %s: %v, want %s", bs[0], err, custody.CodeAddressMismatch)
			}
			if _, err := n.Open(ctx, home); !errors.Is(err, custody.CodeRecordNotFound) {
				t.Fatalf("Open at the old address: %v, want %s", err, custody.CodeRecordNotFound)
			}
		})
	}
}

// TestCorruptRow writes rows whose key columns do not form a valid
// binding: listing them is a *custody.StoreError, a failure of the store,
// not a refusal and not a binding.
func TestCorruptRow(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	for _, row := range [][]any{
		{"acme", "github", "not-a-handle", []byte{0}},
		{"acme", "git hub", "ch_aaaaaaaaaaaaaaaaaaaaaaaaaa", []byte{0}},
	} {
		h := open(t)
		if err := h.Exec(`INSERT INTO `+h.Table+` (namespace, integration, handle, sealed) VALUES ($1, $2, $3, $4)`, row...); err != nil {
			t.Fatal(err)
		}
		_, err := h.Store.List(ctx, "acme")
		var se *custody.StoreError
		if !errors.As(err, &se) {
			t.Errorf("List over the corrupt row %q: %v, want *custody.StoreError", row[:3], err)
		}
	}
}

// TestConcurrentCompareAndSwap races workers that each swap the same
// record from the same old value to a value of their own, round after
// round: in every round exactly one wins and the others are refused with
// custody.CodeRecordConflict. It fails when the store's CompareAndSwap does not
// hold the row from its read to its write (PostgreSQL without FOR UPDATE
// lets two swaps both succeed). Like any race, a miss may need more than
// one round to show.
func TestConcurrentCompareAndSwap(t *testing.T, open func(t *testing.T) Harness) {
	const workers, rounds = 8, 20
	ctx := context.Background()
	s := open(t).Store
	b := custodytest.NewBinding("acme", "github")
	old := []byte("round-0")
	if err := s.Put(ctx, custody.Record{Binding: b, Sealed: old}); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= rounds; round++ {
		var wins atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := make(chan struct{})
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.CompareAndSwap(ctx, b, old, fmt.Appendf(nil, "round-%d-w%d", round, w))
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, custody.CodeRecordConflict):
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: CompareAndSwap: %v, want nil or %s", round, err, custody.CodeRecordConflict)
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d of %d swaps from the same old value succeeded, want exactly 1", round, n, workers)
		}
		rec, err := s.Get(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(rec.Sealed, old) {
			t.Fatalf("round %d: the record is still %q after a successful swap", round, old)
		}
		old = rec.Sealed
	}
}

// BenchStore measures the store's Get, Put, CompareAndSwap and List (of
// 16 records) on s, which must be empty, one operation at a time.
func BenchStore(b *testing.B, s custody.Store) {
	ctx := context.Background()
	var bs []custody.Binding
	for i := range 16 {
		bn := custodytest.NewBinding("bench", fmt.Sprintf("i%02d", i))
		if err := s.Put(ctx, custody.Record{Binding: bn, Sealed: make([]byte, 96)}); err != nil {
			b.Fatal(err)
		}
		bs = append(bs, bn)
	}
	b.Run("Get", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(ctx, bs[i%len(bs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		sealed := make([]byte, 96)
		for i := 0; b.Loop(); i++ {
			if err := s.Put(ctx, custody.Record{Binding: bs[i%len(bs)], Sealed: sealed}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CompareAndSwap", func(b *testing.B) {
		cur, next := make([]byte, 96), make([]byte, 96)
		next[0] = 1
		for b.Loop() {
			if err := s.CompareAndSwap(ctx, bs[0], cur, next); err != nil {
				b.Fatal(err)
			}
			cur, next = next, cur
		}
	})
	b.Run("List16", func(b *testing.B) {
		for b.Loop() {
			if got, err := s.List(ctx, "bench"); err != nil || len(got) != len(bs) {
				b.Fatalf("List = %d bindings, %v", len(got), err)
			}
		}
	})
}

// TestOversizedRow writes, in SQL, a sealed value longer than
// custody.MaxSealedBytes (a database writer filling a row to make every
// Open allocate it): Get is a *custody.StoreError (a corrupt row), and so
// is Native.Open, without the store reading more than
// custody.MaxSealedBytes+1 bytes of it; a CompareAndSwap from any value
// the store could have returned is refused with custody.CodeRecordConflict.
// A row of exactly custody.MaxSealedBytes is read whole.
func TestOversizedRow(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	h := open(t)
	b := custodytest.NewBinding("acme", "github")
	const big = 16 << 20
	insert := `INSERT INTO ` + h.Table + ` (namespace, integration, handle, sealed) VALUES ($1, $2, $3, $4)`
	if err := h.Exec(insert, b.Namespace, b.Integration, b.Handle.String(), make([]byte, big)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := h.Store.Get(ctx, b)
	runtime.ReadMemStats(&after)
	var se *custody.StoreError
	if !errors.As(err, &se) {
		t.Fatalf("Get of a %d-byte row: %v, want *custody.StoreError", big, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*custody.MaxSealedBytes+(1<<20) {
		t.Errorf("Get of a %d-byte row allocated %d bytes, want at most about custody.MaxSealedBytes (%d)", big, grew, custody.MaxSealedBytes)
	}
	n := custody.NewNative(custody.GenerateKeyset(), h.Store)
	if _, err := n.Open(ctx, b); !errors.As(err, &se) {
		t.Fatalf("Native.Open of a %d-byte row: %v, want *custody.StoreError", big, err)
	}
	prefix := make([]byte, custody.MaxSealedBytes+1)
	for _, old := range [][]byte{prefix[:custody.MaxSealedBytes], prefix} {
		if err := h.Store.CompareAndSwap(ctx, b, old, []byte("x")); !errors.Is(err, custody.CodeRecordConflict) {
			t.Fatalf("CompareAndSwap from a %d-byte prefix of a %d-byte row: %v, want %s", len(old), big, err, custody.CodeRecordConflict)
		}
	}

	edge := custodytest.NewBinding("acme", "gitlab")
	if err := h.Exec(insert, edge.Namespace, edge.Integration, edge.Handle.String(), make([]byte, custody.MaxSealedBytes)); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Store.Get(ctx, edge)
	if err != nil || len(rec.Sealed) != custody.MaxSealedBytes {
		t.Fatalf("Get of a row of exactly custody.MaxSealedBytes = %d bytes, %v; want %d bytes", len(rec.Sealed), err, custody.MaxSealedBytes)
	}
	if err := h.Store.CompareAndSwap(ctx, edge, make([]byte, custody.MaxSealedBytes), []byte("x")); err != nil {
		t.Fatalf("CompareAndSwap from a row of exactly custody.MaxSealedBytes: %v", err)
	}
}

// TestRowTampering is a database writer's other attacks on the sealed
// column, against records of two tenants: every prefix of a record
// (truncation), every single-bit change of it, a record copied to
// another tenant's row or to another handle of the same tenant, and the
// two tenants' records swapped. None opens: a prefix shorter than a
// sealed record is custody.CodeRecordMalformed, everything else
// custody.CodeAddressMismatch; and no error text holds the plaintext.
func TestRowTampering(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	h := open(t)
	n := custody.NewNative(custody.GenerateKeyset(), h.Store)
	canary := []byte("tamper-canary-0123456789")
	a := custodytest.NewBinding("tenant-a", "github")
	b := custodytest.NewBinding("tenant-b", "github")
	a2 := custody.Binding{Namespace: a.Namespace, Integration: a.Integration, Handle: address.NewHandle()}
	for _, x := range []custody.Binding{a, b, a2} {
		if err := n.Put(ctx, x, custody.NewSecret(bytes.Clone(canary))); err != nil {
			t.Fatal(err)
		}
	}
	recA, err := h.Store.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	recB, err := h.Store.Get(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	set := func(x custody.Binding, sealed []byte) {
		t.Helper()
		if err := h.Exec(`UPDATE `+h.Table+` SET sealed = $4 WHERE namespace = $1 AND integration = $2 AND handle = $3`,
			x.Namespace, x.Integration, x.Handle.String(), sealed); err != nil {
			t.Fatal(err)
		}
	}
	for i := range len(recA.Sealed) {
		set(a, recA.Sealed[:i])
		s, err := n.Open(ctx, a)
		if err == nil {
			s.Destroy()
			t.Fatalf("prefix of %d bytes: Open succeeded", i)
		}
		if bytes.Contains([]byte(err.Error()), canary) {
			t.Fatalf("prefix of %d bytes: the error text holds the plaintext", i)
		}
		if want := custody.CodeAddressMismatch; i < custody.SealOverhead && !errors.Is(err, custody.CodeRecordMalformed) ||
			i >= custody.SealOverhead && !errors.Is(err, want) {
			t.Fatalf("prefix of %d bytes: %v", i, err)
		}
	}
	for i := range len(recA.Sealed) * 8 {
		flipped := bytes.Clone(recA.Sealed)
		flipped[i/8] ^= 1 << (i % 8)
		set(a, flipped)
		_, err := n.Open(ctx, a)
		if !errors.Is(err, custody.CodeAddressMismatch) && !errors.Is(err, custody.CodeRecordMalformed) && !errors.Is(err, custody.CodeKeyVersionUnknown) {
			t.Fatalf("bit %d flipped: %v, want a refusal", i, err)
		}
	}
	set(a, recB.Sealed)
	set(b, recA.Sealed)
	for _, x := range []custody.Binding{a, b} {
		if _, err := n.Open(ctx, x); !errors.Is(err, custody.CodeAddressMismatch) {
			t.Fatalf("tenants' records swapped: Open at %s: %v, want %s", x, err, custody.CodeAddressMismatch)
		}
	}
	set(a2, recA.Sealed)
	if _, err := n.Open(ctx, a2); !errors.Is(err, custody.CodeAddressMismatch) {
		t.Fatalf("a record replayed under another handle: %v, want %s", err, custody.CodeAddressMismatch)
	}
}

// TestManyRows inserts, in SQL, custody.MaxListBindings rows into one
// namespace (List returns them all), then one more (a database writer
// adding rows by the million): List is a *custody.StoreError, and so is
// Native.CheckNamespace, never a list of more than the bound.
func TestManyRows(t *testing.T, open func(t *testing.T) Harness) {
	ctx := context.Background()
	h := open(t)
	// insert adds the rows from to to-1, in one statement both dialects
	// read alike: row i's handle is "ch_", 20 'a's, i as 5 hex digits
	// spelled a-p, and 'a' (a valid handle; ascending in byte order, so
	// the rows append to the index).
	nibble := func(shift int) string {
		return fmt.Sprintf("substr('abcdefghijklmnop', (i / %d) %% 16 + 1, 1)", 1<<shift)
	}
	insert := func(from, to int) {
		t.Helper()
		q := `WITH RECURSIVE n(i) AS (SELECT ` + fmt.Sprint(from) + ` UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ` + fmt.Sprint(to) + `)
		INSERT INTO ` + h.Table + ` (namespace, integration, handle, sealed)
		SELECT 'acme', 'github', 'ch_' || '` + strings.Repeat("a", 20) + `' || ` +
			nibble(16) + ` || ` + nibble(12) + ` || ` + nibble(8) + ` || ` + nibble(4) + ` || ` + nibble(0) + ` || 'a', $1 FROM n`
		if err := h.Exec(q, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	insert(0, custody.MaxListBindings)
	bs, err := h.Store.List(ctx, "acme")
	if err != nil || len(bs) != custody.MaxListBindings {
		t.Fatalf("List of custody.MaxListBindings rows = %d bindings, %v", len(bs), err)
	}
	insert(custody.MaxListBindings, custody.MaxListBindings+1)
	var se *custody.StoreError
	if bs, err := h.Store.List(ctx, "acme"); !errors.As(err, &se) {
		t.Fatalf("List of custody.MaxListBindings+1 rows = %d bindings, %v; want *custody.StoreError", len(bs), err)
	}
	n := custody.NewNative(custody.GenerateKeyset(), h.Store)
	if _, err := n.CheckNamespace(ctx, "acme"); !errors.As(err, &se) {
		t.Fatalf("CheckNamespace over custody.MaxListBindings+1 rows: %v; want *custody.StoreError", err)
	}
}
