package custody_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/checkfu/checkfu/custody"
)

func ExampleNewHandle() {
	h := custody.NewHandle()
	// Random and printable: safe in events, logs and sandbox configuration.
	fmt.Println(strings.HasPrefix(h.String(), "ch_"), len(h.String()), h.IsZero())
	back, err := custody.ParseHandle(h.String())
	fmt.Println(back == h, err)

	// The zero Handle is not a handle: it does not even marshal.
	_, err = json.Marshal(custody.Handle{})
	fmt.Println(errors.Is(err, custody.CodeInvalidHandle))
	// Output:
	// true 29 false
	// true <nil>
	// true
}

// MustParseHandle is for literal handles in tests and package-level
// values; it panics on anything else.
func ExampleMustParseHandle() {
	var github = custody.Binding{
		Namespace:   "acme",
		Integration: "github",
		Handle:      custody.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa"),
	}
	fmt.Println(github)
	// Output: acme/github/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
}

func ExampleBinding_Validate() {
	fmt.Println(exampleCred.Validate())

	// A path in a name would make two addresses print alike: refused.
	bad := exampleCred
	bad.Namespace = "acme/dev"
	err := bad.Validate()
	fmt.Println(errors.Is(err, custody.CodeInvalidBinding))

	// The zero Binding is invalid.
	fmt.Println(errors.Is(custody.Binding{}.Validate(), custody.CodeInvalidBinding))
	// Output:
	// <nil>
	// true
	// true
}

// A Store implementation rebuilds each row's address from its key
// columns with BindingFromColumns, never from a copy kept beside the
// ciphertext.
func ExampleBindingFromColumns() {
	// Columns as a SQL row would return them.
	namespace, integration, handle := "acme", "github", "ch_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	b, err := custody.BindingFromColumns(namespace, integration, handle)
	fmt.Println(b == exampleCred, err)

	// A corrupt row is refused, never half-read.
	_, err = custody.BindingFromColumns("acme", "github", "GITHUB_TOKEN")
	fmt.Println(errors.Is(err, custody.CodeInvalidHandle))
	// Output:
	// true <nil>
	// true
}

func ExampleCompareBindings() {
	bs := []custody.Binding{
		{Namespace: "acme", Integration: "slack", Handle: custody.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
		{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_bbbbbbbbbbbbbbbbbbbbbbbbba")},
		{Namespace: "acme", Integration: "github", Handle: custody.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
	}
	slices.SortFunc(bs, custody.CompareBindings) // the order of Store.List
	for _, b := range bs {
		fmt.Println(b)
	}
	// Output:
	// acme/github/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
	// acme/github/ch_bbbbbbbbbbbbbbbbbbbbbbbbba
	// acme/slack/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
}

// A MemStore holds sealed records only; CompareAndSwap is how a rotation
// job avoids overwriting a record replaced under it.
func ExampleNewMemStore() {
	ctx := context.Background()
	store := custody.NewMemStore()
	keys := custody.GenerateKeyset()
	first, _ := keys.Seal(exampleCred, custody.NewSecret([]byte("token-1")))
	if err := store.Put(ctx, custody.Record{Binding: exampleCred, Sealed: first}); err != nil {
		panic(err)
	}
	second, _ := keys.Seal(exampleCred, custody.NewSecret([]byte("token-2")))
	fmt.Println(store.CompareAndSwap(ctx, exampleCred, first, second))

	// The record is no longer first: a stale swap is refused.
	err := store.CompareAndSwap(ctx, exampleCred, first, first)
	fmt.Println(errors.Is(err, custody.CodeConflict))

	list, _ := store.List(ctx, "acme")
	fmt.Println(list)

	_, err = store.Get(ctx, custody.Binding{Namespace: "acme", Integration: "slack", Handle: custody.NewHandle()})
	fmt.Println(errors.Is(err, custody.CodeNotFound))
	// Output:
	// <nil>
	// true
	// [acme/github/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa]
	// true
}

// NewNative joins a keyset and a store. A record moved to another
// binding inside the store does not open there.
func ExampleNewNative() {
	ctx := context.Background()
	store := custody.NewMemStore()
	native := custody.NewNative(custody.GenerateKeyset(), store)
	if err := native.Put(ctx, exampleCred, custody.NewSecret([]byte("ghp_example-token"))); err != nil {
		panic(err)
	}

	// Someone with write access to the store copies the row to another
	// tenant's address.
	rec, _ := store.Get(ctx, exampleCred)
	stolen := custody.Binding{Namespace: "evil", Integration: "github", Handle: exampleCred.Handle}
	_ = store.Put(ctx, custody.Record{Binding: stolen, Sealed: rec.Sealed})
	_, err := native.Open(ctx, stolen)
	fmt.Println(errors.Is(err, custody.CodeAddressMismatch))

	// The zero Native has no keys and no store: it refuses everything.
	var zero custody.Native
	_, err = zero.Open(ctx, exampleCred)
	fmt.Println(err != nil)
	// Output:
	// true
	// true
}

func ExampleSecret_Destroy() {
	s := custody.NewSecret([]byte("ghp_example-token"))
	keys := custody.GenerateKeyset()
	s.Destroy()
	fmt.Println(s.Destroyed())
	// Every later use is refused; nothing is sealed.
	_, err := keys.Seal(exampleCred, s)
	fmt.Println(errors.Is(err, custody.CodeSecretDestroyed))
	// Output:
	// true
	// true
}
