package custody_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// A MemoryStore holds sealed records only; CompareAndSwap is how a rotation
// job avoids overwriting a record replaced under it.
func ExampleNewMemoryStore() {
	ctx := context.Background()
	store := custody.NewMemoryStore()
	keys := custody.GenerateKeyset()
	first, _ := keys.Seal(exampleCred, custody.NewSecret([]byte("token-1")))
	if err := store.Put(ctx, custody.Record{Binding: exampleCred, Sealed: first}); err != nil {
		panic(err)
	}
	second, _ := keys.Seal(exampleCred, custody.NewSecret([]byte("token-2")))
	fmt.Println(store.CompareAndSwap(ctx, exampleCred, first, second))

	// The record is no longer first: a stale swap is refused.
	err := store.CompareAndSwap(ctx, exampleCred, first, first)
	fmt.Println(errors.Is(err, custody.CodeRecordConflict))

	list, _ := store.List(ctx, "acme")
	fmt.Println(list)

	_, err = store.Get(ctx, custody.Binding{Namespace: "acme", Integration: "slack", Handle: address.NewHandle()})
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound))
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
	store := custody.NewMemoryStore()
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
