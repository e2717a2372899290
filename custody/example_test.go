package custody_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

// A Secret prints, logs and encodes as "[redacted]", and NewSecret zeroes
// the caller's copy of the bytes.
func ExampleNewSecret() {
	token := []byte("ghp_example-token")
	s := custody.NewSecret(token)
	defer s.Destroy()
	fmt.Println(s)
	fmt.Printf("%#v\n", s)
	fmt.Printf("%q\n", token[:4])
	// Output:
	// [redacted]
	// custody.Secret([redacted])
	// "\x00\x00\x00\x00"
}

// A record sealed for one binding does not open at any other.
func ExampleKeyset_Seal() {
	keys := custody.GenerateKeyset()
	home := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
	sealed, err := keys.Seal(home, custody.NewSecret([]byte("ghp_example-token")))
	if err != nil {
		panic(err)
	}
	if _, err := keys.Open(home, sealed); err == nil {
		fmt.Println("opens at its own binding")
	}
	moved := home
	moved.Namespace = "evil"
	_, err = keys.Open(moved, sealed)
	fmt.Println(errors.Is(err, custody.CodeAddressMismatch))
	// Output:
	// opens at its own binding
	// true
}

// Rotation: seal under version 1, rotate, rewrap, retire version 1.
func ExampleKeyset_Rotate() {
	ctx := context.Background()
	v1 := custody.GenerateKeyset()
	store := custody.NewMemoryStore()
	b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
	if err := custody.NewNative(v1, store).Put(ctx, b, custody.NewSecret([]byte("token"))); err != nil {
		panic(err)
	}
	v2, _ := v1.Rotate()
	n, err := custody.NewNative(v2, store).RewrapNamespace(ctx, "acme")
	fmt.Println(n, err)
	v2only, _ := v2.Without(1)
	s, err := custody.NewNative(v2only, store).Open(ctx, b)
	fmt.Println(v2only, s, err)
	// Output:
	// 1 <nil>
	// custody.Keyset(primary=2 versions=[2]) [redacted] <nil>
}

func ExampleNative() {
	ctx := context.Background()
	n := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
	if err := n.Put(ctx, b, custody.NewSecret([]byte("ghp_example-token"))); err != nil {
		panic(err)
	}
	s, err := n.Open(ctx, b)
	fmt.Println(s, err)
	s.Destroy()
	_, err = n.Open(ctx, custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()})
	fmt.Println(errors.Is(err, custody.CodeRecordNotFound))
	// Output:
	// [redacted] <nil>
	// true
}

// exampleCred is the binding the examples use.
var exampleCred = custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
