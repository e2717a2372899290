package address_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/checkfu/checkfu/custody/address"
)

var exampleCred = address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}

func ExampleNewHandle() {
	h := address.NewHandle()
	// Random and printable: safe in events, logs and sandbox configuration.
	fmt.Println(strings.HasPrefix(h.String(), "ch_"), len(h.String()), h.IsZero())
	back, err := address.ParseHandle(h.String())
	fmt.Println(back == h, err)

	// The zero Handle is not a handle: it does not even marshal.
	_, err = json.Marshal(address.Handle{})
	fmt.Println(errors.Is(err, address.CodeHandleInvalid))
	// Output:
	// true 29 false
	// true <nil>
	// true
}

// address.MustParseHandle is for literal handles in tests and package-level
// values; it panics on anything else.
func ExampleMustParseHandle() {
	var github = address.Binding{
		Namespace:   "acme",
		Integration: "github",
		Handle:      address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa"),
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
	fmt.Println(errors.Is(err, address.CodeBindingInvalid))

	// The zero Binding is invalid.
	fmt.Println(errors.Is(address.Binding{}.Validate(), address.CodeBindingInvalid))
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
	b, err := address.BindingFromColumns(namespace, integration, handle)
	fmt.Println(b == exampleCred, err)

	// A corrupt row is refused, never half-read.
	_, err = address.BindingFromColumns("acme", "github", "GITHUB_TOKEN")
	fmt.Println(errors.Is(err, address.CodeHandleInvalid))
	// Output:
	// true <nil>
	// true
}

func ExampleCompareBindings() {
	bs := []address.Binding{
		{Namespace: "acme", Integration: "slack", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
		{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_bbbbbbbbbbbbbbbbbbbbbbbbba")},
		{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
	}
	slices.SortFunc(bs, address.CompareBindings) // the order of Store.List
	for _, b := range bs {
		fmt.Println(b)
	}
	// Output:
	// acme/github/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
	// acme/github/ch_bbbbbbbbbbbbbbbbbbbbbbbbba
	// acme/slack/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa
}

func ExampleParseHandle() {
	h, err := address.ParseHandle("ch_abcdefghijklmnopqrstuvwxya")
	fmt.Println(h, err)
	_, err = address.ParseHandle("GITHUB_TOKEN")
	fmt.Println(err)
	// Output:
	// ch_abcdefghijklmnopqrstuvwxya <nil>
	// refused: handle_invalid: address: "GITHUB_TOKEN" is not a handle (want "ch_" and 26 base32 characters)
}

// A namespace is a name, not free text: CheckNamespace names the fault.
func ExampleCheckNamespace() {
	for _, s := range []string{"acme", "Acme Corp", ""} {
		err := address.CheckNamespace(s)
		fmt.Println(err == nil, errors.Is(err, address.CodeBindingInvalid))
	}
	// Output:
	// true false
	// false true
	// false true
}
