// Package sweeptest sets the scene for the tests of the sweeps that
// remove what a dead owner left in a shared directory (adapters/process,
// adapters/jail): an owner name whose process is dead ([DeadOwner]), a
// fresh temporary directory the sweeps read ([TempDir]), and a racer
// that swaps a checked directory for a link ([Swap]).
//
// Invariants:
//   - It is for _test.go files under adapters/ (Go's internal rule keeps
//     it there): it imports testing, and it runs processes and changes
//     TMPDIR, which no production path should.
//   - [DeadOwner] returns a name [deadowner.Dead] reports true for when
//     it returns, or skips the test: where this process cannot read its
//     PID namespace no owner is dead and a sweep removes nothing, so a
//     test of what a sweep removes has nothing to show.
//   - [Swap]'s racer acts once, at the one directory it is given, and
//     only then: every other call is a no-op.
package sweeptest
