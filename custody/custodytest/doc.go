// Package custodytest holds what integrators need to test code that uses
// package custody: the conformance suite every custody.Store must pass
// ([TestStore]), the forms a leaked secret would take in captured output
// ([CanaryForms], [FindLeaks]), the exposure checker that proves no
// exported type of a module can hold a custody.Secret ([LoadModule],
// [CheckExposure]), and rapid generators of valid names, handles and
// bindings ([Names], [Handles], [Bindings]), and an in-memory
// authz.EvidenceSink ([MemoryEvidence]).
//
// Invariants:
//
//   - The suite uses only the exported API of custody, so it proves what
//     any caller relies on.
//   - Every subtest gets a fresh store (or rig) from the factory, and the
//     Sequence subtests drive that one instance through a long run of
//     operations against a model.
//   - Each suite's own tests prove it rejects a list of broken
//     implementations.
//   - Nothing here ever prints a secret: a leak is reported by the name of
//     the form and where it was found, never by the bytes.
package custodytest
