// Package keytest holds the conformance suite of runner.KeyWrapper, the
// interface a KMS adapter implements to seal a runner.KeyFile at rest.
//
// Invariants:
//
//   - The suite reaches a wrapper only through runner.KeyWrapper, so it
//     proves what the Runner relies on, and nothing about the KMS behind
//     it: where the key lives and who may use it are the deployment's.
//   - Every subtest gets its wrappers fresh from the caller's factory.
//   - The plaintext it wraps is a fixed printable canary, so a wrapper
//     that copies it into its output or an error is found by a plain
//     substring search.
//   - The suite can fail: its own tests run it against the broken
//     wrappers [TestKeyWrapper]'s doc lists and fail if it accepts one.
package keytest
