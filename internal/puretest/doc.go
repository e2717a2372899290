// Package puretest checks that a pure package stays pure: that none of its
// non-test Go files imports a package that reaches files, processes or the
// network. A pure package (the receipt verifier, the key and envelope code)
// calls [Check] from one of its own tests, naming its directories.
//
// Invariants:
//   - It reads import clauses only ([go/parser.ImportsOnly]); it runs and
//     builds nothing.
//   - A check that reads fewer files than its caller expects fails, so a
//     moved directory does not turn the check into one that cannot fail.
//   - What counts as I/O is [IO], one list for every caller.
//   - It is test code: only _test.go files import it.
package puretest
