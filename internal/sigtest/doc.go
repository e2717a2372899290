// Package sigtest holds the Ed25519 test helpers that package signing and
// the packages built on it (conformance) share, written once.
//
// Invariants:
//   - Everything is deterministic: a key is derived from one seed byte, so
//     a failing test names the same key on every run.
//   - It imports nothing of the module, so package signing's own
//     (internal) tests can use it without an import cycle.
//   - It is test code: only _test.go files import it (imports_test.go
//     refuses a non-test importer of a *test package).
//   - Nothing takes a testing.TB: a helper panics only on a condition that
//     cannot occur (a string that does not marshal, 32 bytes that do not
//     clamp), and says so beside the panic.
package sigtest
