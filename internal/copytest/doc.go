// Package copytest checks, for the module's own tests, the one property
// of a table the module hands out through a function rather than an
// exported variable: every call returns the caller's own copy, so that
// writing over one changes nothing the next caller, or the library
// itself, reads.
//
// Invariants:
//   - [Fresh] fails its test when the getter returns nothing, or when a
//     write to one result shows in the next (a getter that hands out its
//     table itself); it passes a getter that returns a copy each call.
//   - It only calls the getter and writes to what the getter returned:
//     no I/O.
package copytest
