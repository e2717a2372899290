package custodytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// seqRun numbers the checks of testSequence, so that each check's
// namespaces are fresh in the one store the whole property shares.
var seqRun atomic.Int64

// testSequence drives ONE store through many puts, gets, compare-and-
// swaps, deletes and lists, and compares every answer with a model (a
// map). The bindings come from a small pool that shares handles across
// namespaces and integrations and holds a case variant and a boundary
// shift of one namespace, so that a store keying records by less than
// the whole binding (or by a folded or concatenated one) answers for the
// wrong record.
func testSequence(t testing.TB, s custody.Store) { sequence(t, s, nil) }

// sequence is testSequence; when reopen is not nil it is also an action:
// it closes the store and returns a new handle on the same records.
func sequence(t testing.TB, s custody.Store, reopen func(custody.Store) (custody.Store, error)) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		tag := "seq" + strconv.FormatInt(seqRun.Add(1), 10)
		namespaces := []string{tag + "a", tag + "b", tag + "A", tag + "a-x"}
		integrations := []string{"x", "y", "x-y"}
		handles := rapid.SliceOfNDistinct(Handles(), 3, 3, func(h custody.Handle) string { return h.String() }).Draw(rt, "handles")
		binding := func(rt *rapid.T) custody.Binding {
			return custody.Binding{
				Namespace:   rapid.SampledFrom(namespaces).Draw(rt, "namespace"),
				Integration: rapid.SampledFrom(integrations).Draw(rt, "integration"),
				Handle:      rapid.SampledFrom(handles).Draw(rt, "handle"),
			}
		}
		value := rapid.SliceOfN(rapid.Byte(), 0, 6)
		model := map[custody.Binding][]byte{}

		checkList := func(rt *rapid.T, ns string) {
			got, err := s.List(ctx, ns)
			if err != nil {
				rt.Fatalf("List(%s): %v", ns, err)
			}
			var want []custody.Binding
			for b := range model {
				if b.Namespace == ns {
					want = append(want, b)
				}
			}
			slices.SortFunc(want, address.CompareBindings)
			if !slices.Equal(got, want) {
				rt.Fatalf("List(%s) = %v, want %v", ns, got, want)
			}
		}

		actions := map[string]func(*rapid.T){
			"put": func(rt *rapid.T) {
				b, v := binding(rt), value.Draw(rt, "sealed")
				if err := s.Put(ctx, custody.Record{Binding: b, Sealed: v}); err != nil {
					rt.Fatalf("Put(%s): %v", b, err)
				}
				model[b] = bytes.Clone(v)
			},
			"get": func(rt *rapid.T) {
				b := binding(rt)
				rec, err := s.Get(ctx, b)
				want, ok := model[b]
				switch {
				case !ok && !errors.Is(err, custody.CodeRecordNotFound):
					rt.Fatalf("Get(%s) of an absent record = %x, %v; want record_not_found", b, rec.Sealed, err)
				case ok && err != nil:
					rt.Fatalf("Get(%s): %v; want %x", b, err, want)
				case ok && (rec.Binding != b || !bytes.Equal(rec.Sealed, want)):
					rt.Fatalf("Get(%s) = %s %x, want %x", b, rec.Binding, rec.Sealed, want)
				}
			},
			"delete": func(rt *rapid.T) {
				b := binding(rt)
				err := s.Delete(ctx, b)
				if _, ok := model[b]; ok {
					if err != nil {
						rt.Fatalf("Delete(%s): %v", b, err)
					}
					delete(model, b)
				} else if !errors.Is(err, custody.CodeRecordNotFound) {
					rt.Fatalf("Delete(%s) of an absent record = %v; want record_not_found", b, err)
				}
			},
			"compare-and-swap": func(rt *rapid.T) {
				b := binding(rt)
				cur, ok := model[b]
				old := value.Draw(rt, "old")
				if ok && rapid.Bool().Draw(rt, "current") {
					old = cur
				}
				next := value.Draw(rt, "sealed")
				err := s.CompareAndSwap(ctx, b, old, next)
				switch {
				case !ok:
					if !errors.Is(err, custody.CodeRecordNotFound) {
						rt.Fatalf("CompareAndSwap(%s) of an absent record = %v; want record_not_found", b, err)
					}
				case bytes.Equal(cur, old):
					if err != nil {
						rt.Fatalf("CompareAndSwap(%s, %x -> %x): %v", b, old, next, err)
					}
					model[b] = bytes.Clone(next)
				default:
					if !errors.Is(err, custody.CodeRecordConflict) {
						rt.Fatalf("CompareAndSwap(%s, %x -> %x) on %x = %v; want record_conflict", b, old, next, cur, err)
					}
				}
			},
			"list": func(rt *rapid.T) {
				checkList(rt, rapid.SampledFrom(namespaces).Draw(rt, "namespace"))
			},
		}
		if reopen != nil {
			actions["reopen"] = func(rt *rapid.T) {
				if rapid.IntRange(0, 3).Draw(rt, "reopen now") != 0 {
					return // reopening is slow on a durable store: one draw in four
				}
				var err error
				if s, err = reopen(s); err != nil {
					rt.Fatalf("reopen: %v", err)
				}
				for b, want := range model {
					rec, err := s.Get(ctx, b)
					if err != nil || !bytes.Equal(rec.Sealed, want) {
						rt.Fatalf("after reopen Get(%s) = %x, %v; want %x", b, rec.Sealed, err, want)
					}
				}
			}
		}
		rt.Repeat(actions)
		for _, ns := range namespaces {
			checkList(rt, ns)
		}
	})
}

// testConcurrentCAS races compare-and-swaps from one old value, round
// after round, and requires exactly one winner per round; then it counts
// with compare-and-swap retry loops and requires that no increment is
// lost. A CompareAndSwap that reads, compares and writes without holding
// the record fails both.
func testConcurrentCAS(t testing.TB, s custody.Store) {
	ctx := context.Background()
	b := NewBinding("cas", "race")
	mustPut(t, s, b, []byte("start"))
	const rounds, racers = 10, 6
	for round := range rounds {
		old := mustGet(t, s, b).Sealed
		var wins []string
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for r := range racers {
			val := fmt.Sprintf("round%d-racer%d", round, r)
			wg.Go(func() {
				<-start
				err := s.CompareAndSwap(ctx, b, old, []byte(val))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins = append(wins, val)
				case !errors.Is(err, custody.CodeRecordConflict):
					t.Errorf("racing CompareAndSwap: %v; want nil or record_conflict", err)
				}
			})
		}
		close(start)
		wg.Wait()
		got := string(mustGet(t, s, b).Sealed)
		if len(wins) != 1 || got != wins[0] {
			t.Fatalf("round %d: %d racing CompareAndSwaps from one old value won (%v) and the record holds %q; want exactly one winner, whose value is stored", round, len(wins), wins, got)
		}
	}

	counter := NewBinding("cas", "counter")
	mustPut(t, s, counter, []byte("0"))
	const workers, each = 4, 8
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				for {
					rec, err := s.Get(ctx, counter)
					if err != nil {
						t.Errorf("Get(counter): %v", err)
						return
					}
					n, _ := strconv.Atoi(string(rec.Sealed))
					err = s.CompareAndSwap(ctx, counter, rec.Sealed, []byte(strconv.Itoa(n+1)))
					if err == nil {
						break
					}
					if !errors.Is(err, custody.CodeRecordConflict) {
						t.Errorf("CompareAndSwap(counter): %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if got := string(mustGet(t, s, counter).Sealed); got != strconv.Itoa(workers*each) {
		t.Fatalf("%d compare-and-swap increments left the counter at %s: increments were lost", workers*each, got)
	}
}

// A Storage is durable storage that TestStoreReopen closes and reopens.
type Storage[T testing.TB] struct {
	// Open returns a new handle on the storage's records; every handle,
	// including one opened after another was closed, sees the same
	// records.
	Open func(t T) custody.Store
	// Close closes a handle Open returned.
	Close func(t T, s custody.Store) error
}

// TestStoreReopen runs the Sequence of [TestStore] with one more action:
// close the store and open a new handle on the same storage, after which
// every record of the model must read back as it was. newStorage is
// called once and must return empty storage (for SQLite, a new file),
// which it removes with t.Cleanup; the suite closes the handle it holds
// last.
//
// Proved to catch (the suite's own tests run it against it): a store that
// keeps its last write in a buffer it forgets to flush on Close. It
// cannot prove durability across a crash (kill -9): test that against
// the implementation.
func TestStoreReopen[T testing.TB](t T, newStorage func(t T) Storage[T]) {
	t.Helper()
	st := newStorage(t)
	s := st.Open(t)
	defer func() {
		if err := st.Close(t, s); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	sequence(t, s, func(old custody.Store) (custody.Store, error) {
		if err := st.Close(t, old); err != nil {
			return nil, fmt.Errorf("close: %w", err)
		}
		s = st.Open(t)
		return s, nil
	})
}
