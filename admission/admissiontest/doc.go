// Package admissiontest builds the keys, capabilities and enrollments that
// tests of admission and of the packages built on it (adapters, the
// Runner) need. Keys are deterministic and for tests only: never use them
// to sign anything real.
//
// Invariants:
//
//   - A key is a function of its name alone: [Signer] derives the Ed25519
//     seed from SHA-256 of the name, so the same name gives the same key
//     in every run and process, and different names give different keys.
//   - A helper never returns an error: a refusal fails the test through
//     testing.TB.Fatal, so whatever it returns admission has accepted
//     ([Enroll]'s enrollment, [Receipt]'s verified receipt).
//   - Outputs are reproducible: statements and receipts carry a fixed
//     issue time (2026-12-01T00:00:00Z) and fixed revisions.
//   - Trust is explicit: a [KeySet] trusts exactly the names it is given,
//     and [Receipt] returns the one set that trusts its attester.
package admissiontest
