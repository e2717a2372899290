package custody_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// Rewrap moves one record to the new primary version. It swaps with
// CompareAndSwap, so a record replaced meanwhile is never overwritten.
func ExampleNative_Rewrap() {
	ctx := context.Background()
	store := custody.NewMemoryStore()
	v1 := custody.GenerateKeyset()
	if err := custody.NewNative(v1, store).Put(ctx, exampleCred, custody.NewSecret([]byte("token"))); err != nil {
		panic(err)
	}
	v2, _ := v1.Rotate()
	n := custody.NewNative(v2, store)
	fmt.Println(n.Rewrap(ctx, exampleCred))
	rec, _ := store.Get(ctx, exampleCred)
	v, _ := custody.SealedKeyVersion(rec.Sealed)
	fmt.Println("sealed under version", v)

	err := n.Rewrap(ctx, custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()})
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound))
	// Output:
	// <nil>
	// sealed under version 2
	// true
}

// Delete removes a credential; later opens are refused.
func ExampleNative_Delete() {
	ctx := context.Background()
	n := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	_ = n.Put(ctx, exampleCred, custody.NewSecret([]byte("token")))
	fmt.Println(n.Delete(ctx, exampleCred))
	_, err := n.Open(ctx, exampleCred)
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound))
	// Output:
	// <nil>
	// true
}
