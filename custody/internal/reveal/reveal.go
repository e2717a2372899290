// Package reveal lets the outbound edge (custody/edge) and the runtime
// conformance suite (custodytest) read the bytes of a custody.Secret
// inside a callback, without package custody exporting a method that any
// package could call through an interface assertion. Go's internal-package
// rule restricts importers of this package to custody/ and its
// sub-packages; the import-law test (imports_test.go) narrows that to
// custody, custody/edge and custody/custodytest, keeps custody/authz from
// reaching it at all, and keeps acp/, adapters/ and egress/ away from
// custody/ entirely.
//
// Invariants: the hook is registered exactly once, by package custody, at
// initialisation; With never copies the bytes out of the callback's reach
// on its own, and custody zeroes the slice it passes when the callback
// returns.
package reveal

import (
	"errors"
	"sync/atomic"
)

// Func reveals secret (a *custody.Secret) to use.
type Func func(secret any, use func([]byte) error) error

var hook atomic.Pointer[Func]

// Register installs f as the reveal hook. Package custody calls it once
// from a package-level variable initialiser; a second call panics, so
// nothing can replace the hook later. It returns true so that it can be
// used in a variable declaration.
func Register(f Func) bool {
	if !hook.CompareAndSwap(nil, &f) {
		panic("reveal: hook registered twice")
	}
	return true
}

// With calls use with the bytes of secret, which must be a
// *custody.Secret. use must not retain the slice: it is zeroed when use
// returns.
func With(secret any, use func([]byte) error) error {
	f := hook.Load()
	if f == nil {
		return errors.New("reveal: package custody is not linked in")
	}
	return (*f)(secret, use)
}
