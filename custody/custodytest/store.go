package custodytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// TestStore runs the conformance suite against the Store implementation
// that newStore returns. newStore is called once per subtest and must
// return an empty store that it closes with t.Cleanup. T is *testing.T
// for an implementation's own tests; the type parameter lets the suite's
// tests run it under a recorder (see "Proved to catch" below).
//
// The suite proves, through the exported API only: Put/Get round trips
// with the exact binding rebuilt from the key columns; replace, delete,
// compare-and-swap and list semantics and their refusals; that slices are
// copied in and out; that invalid bindings are refused; that records at
// addresses differing in one component are distinct; that a sealed record
// moved to another namespace, integration or handle, or to a
// boundary-shifted address, fails to open with address_mismatch;
// key rotation and rewrap; that sealed bytes hold none of the canary's
// forms; concurrent use (run it with -race); that of compare-and-swaps
// racing from one old value exactly one wins, and that compare-and-swap
// retry loops lose no increment; and, in Sequence, that ONE store driven
// through many puts, gets, compare-and-swaps, deletes and lists over
// bindings that share handles across namespaces (with a case variant and
// a boundary shift among them) answers every call as a model map does.
//
// Proved to catch (the suite's own tests run it against each of these
// broken stores and fail if it ever accepts one): a Get that ignores the
// namespace; a Delete that ignores it (only Sequence catches that one); a
// CompareAndSwap that reads, compares and writes without
// holding the record; keys folded to lower case (a case-insensitive
// collation); namespace and integration concatenated into one key
// without a separator; a CompareAndSwap that inserts when nothing is
// stored; a Put that keeps the caller's slice.
//
// It cannot prove what the store writes to its own files:
// implementations test that themselves (the SQLite and PostgreSQL tests
// inspect their raw bytes and rows), nor that records survive closing
// and reopening the store, which Store has no method for: run
// [TestStoreReopen] for that.
func TestStore[T testing.TB](t T, newStore func(t T) custody.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(testing.TB, custody.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"NotFound", testNotFound},
		{"Replace", testReplace},
		{"CopiesSlices", testCopiesSlices},
		{"InvalidBinding", testInvalidBinding},
		{"DistinctAddresses", testDistinctAddresses},
		{"CompareAndSwap", testCompareAndSwap},
		{"Delete", testDelete},
		{"List", testList},
		{"MovedRecordsFailToOpen", testMoves},
		{"RotateAndRewrap", testRotateRewrap},
		{"NoPlaintextInRecords", testNoPlaintext},
		{"Concurrent", testConcurrent},
		{"ConcurrentCompareAndSwap", testConcurrentCAS},
		{"Sequence", testSequence},
	}
	for _, tc := range tests {
		suitetest.Run(t, tc.name, func(t T) { tc.fn(t, newStore(t)) })
	}
}

// NewBinding returns a valid binding with a fresh handle.
func NewBinding(namespace, integration string) custody.Binding {
	return custody.Binding{Namespace: namespace, Integration: integration, Handle: address.NewHandle()}
}

func wantCode(t testing.TB, what string, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("%s: error = %v, want code %s", what, err, code)
	}
	var se *custody.StoreError
	if errors.As(err, &se) {
		t.Fatalf("%s: refusal %s is also a *StoreError: %v", what, code, err)
	}
}

func mustPut(t testing.TB, s custody.Store, b custody.Binding, sealed []byte) {
	t.Helper()
	if err := s.Put(context.Background(), custody.Record{Binding: b, Sealed: sealed}); err != nil {
		t.Fatalf("Put(%s): %v", b, err)
	}
}

func mustGet(t testing.TB, s custody.Store, b custody.Binding) custody.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), b)
	if err != nil {
		t.Fatalf("Get(%s): %v", b, err)
	}
	if rec.Binding != b {
		t.Fatalf("Get(%s) returned binding %s", b, rec.Binding)
	}
	return rec
}

func testRoundTrip(t testing.TB, s custody.Store) {
	b := NewBinding("acme", "github")
	sealed := []byte{0, 1, 2, 0xff, 'x', 0}
	mustPut(t, s, b, sealed)
	if got := mustGet(t, s, b).Sealed; !bytes.Equal(got, sealed) {
		t.Fatalf("Get = %x, want %x", got, sealed)
	}
	empty := NewBinding("acme", "github")
	mustPut(t, s, empty, []byte{})
	if got := mustGet(t, s, empty).Sealed; len(got) != 0 {
		t.Fatalf("Get of empty record = %x", got)
	}
}

func testNotFound(t testing.TB, s custody.Store) {
	_, err := s.Get(context.Background(), NewBinding("acme", "github"))
	wantCode(t, "Get of an absent binding", err, custody.CodeRecordNotFound)
}

func testReplace(t testing.TB, s custody.Store) {
	b := NewBinding("acme", "github")
	mustPut(t, s, b, []byte("one"))
	mustPut(t, s, b, []byte("two"))
	if got := mustGet(t, s, b).Sealed; string(got) != "two" {
		t.Fatalf("after replace Get = %q, want %q", got, "two")
	}
	bs, err := s.List(context.Background(), "acme")
	if err != nil || len(bs) != 1 {
		t.Fatalf("List after replace = %v, %v; want one binding", bs, err)
	}
}

func testCopiesSlices(t testing.TB, s custody.Store) {
	b := NewBinding("acme", "github")
	in := []byte("sealed-bytes")
	mustPut(t, s, b, in)
	in[0] = 'X'
	out := mustGet(t, s, b).Sealed
	if string(out) != "sealed-bytes" {
		t.Fatalf("store kept the caller's slice: %q", out)
	}
	out[0] = 'Y'
	if got := mustGet(t, s, b).Sealed; string(got) != "sealed-bytes" {
		t.Fatalf("store returned its own slice: %q", got)
	}
}

func testInvalidBinding(t testing.TB, s custody.Store) {
	ctx := context.Background()
	h := address.NewHandle()
	bad := []custody.Binding{
		{},
		{Namespace: "acme", Integration: "github"},
		{Namespace: "", Integration: "github", Handle: h},
		{Namespace: "acme", Integration: "", Handle: h},
		{Namespace: "ac/me", Integration: "github", Handle: h},
		{Namespace: "acme", Integration: "git hub", Handle: h},
		{Namespace: "-acme", Integration: "github", Handle: h},
	}
	for _, b := range bad {
		wantCode(t, fmt.Sprintf("Put(%q)", b), s.Put(ctx, custody.Record{Binding: b, Sealed: []byte("x")}), address.CodeBindingInvalid)
		_, err := s.Get(ctx, b)
		wantCode(t, fmt.Sprintf("Get(%q)", b), err, address.CodeBindingInvalid)
		wantCode(t, fmt.Sprintf("Delete(%q)", b), s.Delete(ctx, b), address.CodeBindingInvalid)
		wantCode(t, fmt.Sprintf("CompareAndSwap(%q)", b), s.CompareAndSwap(ctx, b, nil, nil), address.CodeBindingInvalid)
	}
	_, err := s.List(ctx, "")
	wantCode(t, "List(\"\")", err, address.CodeBindingInvalid)
}

func testDistinctAddresses(t testing.TB, s custody.Store) {
	base := NewBinding("github", "deploy-token")
	variants := []custody.Binding{
		base,
		{Namespace: "github2", Integration: base.Integration, Handle: base.Handle},
		{Namespace: base.Namespace, Integration: "deploy-token2", Handle: base.Handle},
		{Namespace: base.Namespace, Integration: base.Integration, Handle: address.NewHandle()},
		{Namespace: "githubdeploy-", Integration: "token", Handle: base.Handle},
		{Namespace: "GitHub", Integration: base.Integration, Handle: base.Handle},
	}
	for i, b := range variants {
		mustPut(t, s, b, []byte{byte(i)})
	}
	for i, b := range variants {
		if got := mustGet(t, s, b).Sealed; !bytes.Equal(got, []byte{byte(i)}) {
			t.Errorf("Get(%s) = %x, want %x: addresses collide", b, got, []byte{byte(i)})
		}
	}
}

func testCompareAndSwap(t testing.TB, s custody.Store) {
	ctx := context.Background()
	b := NewBinding("acme", "github")
	wantCode(t, "CompareAndSwap on absent record", s.CompareAndSwap(ctx, b, []byte("a"), []byte("b")), custody.CodeRecordNotFound)
	mustPut(t, s, b, []byte("a"))
	wantCode(t, "CompareAndSwap with stale old", s.CompareAndSwap(ctx, b, []byte("z"), []byte("b")), custody.CodeRecordConflict)
	wantCode(t, "CompareAndSwap with a prefix of old", s.CompareAndSwap(ctx, b, []byte(""), []byte("b")), custody.CodeRecordConflict)
	if got := mustGet(t, s, b).Sealed; string(got) != "a" {
		t.Fatalf("refused CompareAndSwap changed the record to %q", got)
	}
	if err := s.CompareAndSwap(ctx, b, []byte("a"), []byte("b")); err != nil {
		t.Fatalf("CompareAndSwap: %v", err)
	}
	if got := mustGet(t, s, b).Sealed; string(got) != "b" {
		t.Fatalf("after CompareAndSwap Get = %q, want %q", got, "b")
	}
}

func testDelete(t testing.TB, s custody.Store) {
	ctx := context.Background()
	b := NewBinding("acme", "github")
	other := NewBinding("acme", "github")
	wantCode(t, "Delete of absent record", s.Delete(ctx, b), custody.CodeRecordNotFound)
	mustPut(t, s, b, []byte("a"))
	mustPut(t, s, other, []byte("o"))
	if err := s.Delete(ctx, b); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Get(ctx, b)
	wantCode(t, "Get after Delete", err, custody.CodeRecordNotFound)
	wantCode(t, "second Delete", s.Delete(ctx, b), custody.CodeRecordNotFound)
	mustGet(t, s, other)
}

func testList(t testing.TB, s custody.Store) {
	ctx := context.Background()
	if bs, err := s.List(ctx, "acme"); err != nil || len(bs) != 0 {
		t.Fatalf("List of empty store = %v, %v", bs, err)
	}
	want := []custody.Binding{
		NewBinding("acme", "github"), NewBinding("acme", "github"), NewBinding("acme", "slack"),
		NewBinding("acme", "a-first"), NewBinding("acme", "Zed"),
	}
	for _, b := range want {
		mustPut(t, s, b, []byte("x"))
	}
	for _, b := range []custody.Binding{NewBinding("acme2", "github"), NewBinding("acm", "github"), NewBinding("ACME", "github")} {
		mustPut(t, s, b, []byte("y"))
	}
	got, err := s.List(ctx, "acme")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	slices.SortFunc(want, address.CompareBindings)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List(acme) =\n%v\nwant\n%v", got, want)
	}
}

// testMoves seals a record at one address and stores the same sealed
// bytes at another, as an attacker with write access to the store's rows
// would; the record must not open there.
func testMoves(t testing.TB, s custody.Store) {
	ctx := context.Background()
	keys := custody.GenerateKeyset()
	n := custody.NewNative(keys, s)
	home := NewBinding("github", "deploy-token")
	secret := custody.NewSecret([]byte("moves-canary-0123456789"))
	defer secret.Destroy()
	if err := n.Put(ctx, home, secret); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err := n.Open(ctx, home)
	if err != nil {
		t.Fatalf("Open at home: %v", err)
	}
	got.Destroy()
	sealed := mustGet(t, s, home).Sealed
	moves := map[string]custody.Binding{
		"namespace":      {Namespace: "github2", Integration: home.Integration, Handle: home.Handle},
		"integration":    {Namespace: home.Namespace, Integration: "deploy-token2", Handle: home.Handle},
		"handle":         {Namespace: home.Namespace, Integration: home.Integration, Handle: address.NewHandle()},
		"boundary-shift": {Namespace: "githubdeploy-", Integration: "token", Handle: home.Handle},
		"case":           {Namespace: "GitHub", Integration: home.Integration, Handle: home.Handle},
	}
	for name, to := range moves {
		mustPut(t, s, to, sealed)
		_, err := n.Open(ctx, to)
		wantCode(t, "Open after a move of the "+name, err, custody.CodeAddressMismatch)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	mustPut(t, s, home, tampered)
	_, err = n.Open(ctx, home)
	wantCode(t, "Open of a tampered record", err, custody.CodeAddressMismatch)
	mustPut(t, s, home, sealed[:10])
	_, err = n.Open(ctx, home)
	wantCode(t, "Open of a truncated record", err, custody.CodeRecordMalformed)
}

func testRotateRewrap(t testing.TB, s custody.Store) {
	ctx := context.Background()
	k1 := custody.GenerateKeyset()
	a, b := NewBinding("acme", "github"), NewBinding("acme", "slack")
	for _, x := range []custody.Binding{a, b} {
		sec := custody.NewSecret([]byte("rotate-canary-" + x.Integration))
		if err := custody.NewNative(k1, s).Put(ctx, x, sec); err != nil {
			t.Fatalf("Put: %v", err)
		}
		sec.Destroy()
	}
	k2, err := k1.Rotate()
	if err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	n2 := custody.NewNative(k2, s)
	for _, x := range []custody.Binding{a, b} {
		sec, err := n2.Open(ctx, x)
		if err != nil {
			t.Fatalf("Open of a version-1 record with the rotated keyset: %v", err)
		}
		sec.Destroy()
	}
	if err := n2.Rewrap(ctx, a); err != nil {
		t.Fatalf("Rewrap: %v", err)
	}
	if v, err := custody.SealedKeyVersion(mustGet(t, s, a).Sealed); err != nil || v != k2.Primary() {
		t.Fatalf("after Rewrap the record is under version %d (%v), want %d", v, err, k2.Primary())
	}
	k3, err := k2.Without(1)
	if err != nil {
		t.Fatalf("Without(1): %v", err)
	}
	n3 := custody.NewNative(k3, s)
	sec, err := n3.Open(ctx, a)
	if err != nil {
		t.Fatalf("Open of a rewrapped record after removing version 1: %v", err)
	}
	sec.Destroy()
	_, err = n3.Open(ctx, b)
	wantCode(t, "Open of a version-1 record after removing version 1", err, custody.CodeKeyVersionUnknown)
	if n, err := n2.RewrapNamespace(ctx, "acme"); err != nil || n != 2 {
		t.Fatalf("RewrapNamespace = %d, %v; want 2, nil", n, err)
	}
	sec, err = n3.Open(ctx, b)
	if err != nil {
		t.Fatalf("Open after RewrapNamespace: %v", err)
	}
	sec.Destroy()
}

func testNoPlaintext(t testing.TB, s custody.Store) {
	ctx := context.Background()
	canary := []byte("no-plaintext-canary-7c1d9e")
	n := custody.NewNative(custody.GenerateKeyset(), s)
	b := NewBinding("acme", "github")
	if err := n.Put(ctx, b, custody.NewSecret(bytes.Clone(canary))); err != nil {
		t.Fatal(err)
	}
	rec := mustGet(t, s, b)
	if leaks := FindLeaks(canary, rec.Sealed); leaks != nil {
		t.Fatalf("sealed record holds the canary as %v", leaks)
	}
	if leaks := FindLeaks(canary, []byte(fmt.Sprintf("%v %+v %#v", rec, rec, rec))); leaks != nil {
		t.Fatalf("printed record holds the canary as %v", leaks)
	}
}

func testConcurrent(t testing.TB, s custody.Store) {
	ctx := context.Background()
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b := NewBinding("conc", fmt.Sprintf("w%d", w))
				val := []byte(fmt.Sprintf("%d-%d", w, i))
				if err := s.Put(ctx, custody.Record{Binding: b, Sealed: val}); err != nil {
					errs <- err
					continue
				}
				rec, err := s.Get(ctx, b)
				if err != nil {
					errs <- err
				} else if !bytes.Equal(rec.Sealed, val) {
					errs <- fmt.Errorf("Get(%s) = %q, want %q", b, rec.Sealed, val)
				}
				if _, err := s.List(ctx, "conc"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	bs, err := s.List(ctx, "conc")
	if err != nil || len(bs) != workers*each {
		t.Fatalf("List after concurrent puts = %d bindings, %v; want %d", len(bs), err, workers*each)
	}
}
