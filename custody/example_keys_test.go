package custody_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
)

func ExampleGenerateKeyset() {
	keys := custody.GenerateKeyset()
	fmt.Println(keys, keys.Primary(), keys.Versions())

	// The zero Keyset holds no keys: every use is refused.
	var zero custody.Keyset
	_, err := zero.Seal(exampleCred, custody.NewSecret([]byte("token")))
	fmt.Println(errors.Is(err, custody.CodeKeysetInvalid))
	// Output:
	// custody.Keyset(primary=1 versions=[1]) 1 [1]
	// true
}

// NewKeyset builds a keyset from root keys kept elsewhere (a KMS, say).
func ExampleNewKeyset() {
	root := make([]byte, custody.RootKeySize)
	if _, err := rand.Read(root); err != nil {
		panic(err)
	}
	rootKey := custody.NewSecret(root) // zeroes root
	keys, err := custody.NewKeyset(1, map[uint32]*custody.Secret{1: rootKey})
	rootKey.Destroy() // the keyset keeps its own copy
	fmt.Println(keys, err)

	// A key of the wrong size, or a primary that is not listed, is refused.
	_, err = custody.NewKeyset(1, map[uint32]*custody.Secret{1: custody.NewSecret([]byte("short"))})
	fmt.Println(errors.Is(err, custody.CodeKeysetInvalid))
	_, err = custody.NewKeyset(2, map[uint32]*custody.Secret{1: custody.NewSecret(make([]byte, custody.RootKeySize))})
	fmt.Println(err)
	// Output:
	// custody.Keyset(primary=1 versions=[1]) <nil>
	// true
	// refused: keyset_invalid: custody: primary version 2 is not one of the keyset's versions
}

func ExampleKeyset_Open() {
	v1 := custody.GenerateKeyset()
	sealed, err := v1.Seal(exampleCred, custody.NewSecret([]byte("ghp_example-token")))
	if err != nil {
		panic(err)
	}
	s, err := v1.Open(exampleCred, sealed)
	fmt.Println(s, err) // a Secret prints redacted
	s.Destroy()

	// A keyset that does not list the record's version cannot open it.
	v2, _ := v1.Rotate()
	v2only, _ := v2.Without(1)
	_, err = v2only.Open(exampleCred, sealed)
	fmt.Println(errors.Is(err, custody.CodeKeyVersionUnknown))

	// One flipped bit and the record no longer opens; an altered record
	// and a moved one are indistinguishable.
	sealed[len(sealed)-1] ^= 1
	_, err = v1.Open(exampleCred, sealed)
	fmt.Println(errors.Is(err, custody.CodeAddressMismatch))
	// Output:
	// [redacted] <nil>
	// true
	// true
}

// Rewrap moves a record to the primary version without the plaintext
// leaving custody.
func ExampleKeyset_Rewrap() {
	v1 := custody.GenerateKeyset()
	sealed, _ := v1.Seal(exampleCred, custody.NewSecret([]byte("token")))
	v2, _ := v1.Rotate()
	rewrapped, err := v2.Rewrap(exampleCred, sealed)
	if err != nil {
		panic(err)
	}
	before, _ := custody.SealedKeyVersion(sealed)
	after, _ := custody.SealedKeyVersion(rewrapped)
	fmt.Println(before, "->", after)

	// Rewrap opens first, so it refuses what Open refuses.
	other := exampleCred
	other.Integration = "gitlab"
	_, err = v2.Rewrap(other, sealed)
	fmt.Println(errors.Is(err, custody.CodeAddressMismatch))
	// Output:
	// 1 -> 2
	// true
}

// SealedKeyVersion tells a rotation job which records still need a
// rewrap, without opening them.
func ExampleSealedKeyVersion() {
	keys := custody.GenerateKeyset()
	sealed, _ := keys.Seal(exampleCred, custody.NewSecret([]byte("token")))
	v, err := custody.SealedKeyVersion(sealed)
	fmt.Println(v, err, len(sealed) == custody.SealOverhead+len("token"))

	_, err = custody.SealedKeyVersion(bytes.Repeat([]byte{0}, 3))
	fmt.Println(errors.Is(err, custody.CodeRecordMalformed))
	// Output:
	// 1 <nil> true
	// true
}
