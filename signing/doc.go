// Package signing is checkfu's one implementation of strict Ed25519 keys
// and DSSE envelopes: conformance receipts, admission records, the
// process wire's TLS authentication and the event log's checkpoint
// verifiers all admit keys and verify signatures here, and nowhere else.
//
// A signed statement is a DSSE envelope (https://github.com/secure-systems-lab/dsse)
// holding exactly one signature: pure Ed25519 over DSSE's
// PAE(payloadType, payload). Each statement type has its own payloadType
// in the "checkfu." namespace, its signing domain. A key is named by its
// [KeyID], the SHA-256 of its PKIX DER. docs/receipts.md specifies the
// bytes precisely enough for an independent verifier.
//
// Entry points: [ParsePublicKey] admits a raw key and [PublicKey.Verify]
// verifies strictly; [ParseAttesterSet] and [LoadAttesterSet] build a
// reviewed set of named keys and [AttesterSet.VerifyPayload] says who
// signed which payload; [GenerateSigner], [ParsePrivateKeyPEM],
// [LoadSigner] and [Signer.SignPayload] make envelopes; [KeyIDOf] and
// [ParseKeyID] name keys.
//
// Invariants:
//
//   - Admission refuses any public key that does not decode and re-encode
//     to the same bytes (PEM, DER and point), is of small order, or lies
//     outside the prime-order subgroup; and, in a set, duplicate names or
//     keys. It runs once per key, when the key or set is parsed.
//   - Verification is strict Ed25519: everything crypto/ed25519 refuses,
//     plus small-order or non-canonical public keys (at admission) and
//     signatures whose R is of small order.
//   - An [AttesterSet] is immutable: trust widens only by the operator
//     shipping a set file, never through a call a signer can reach. A nil
//     set is empty.
//   - The signature is verified before the caller sees the payload; what
//     the payload means, and whether it is canonical, is the statement
//     type's to check, after [AttesterSet.VerifyPayload] returns nil.
//   - A signature proves authorship, not truth.
//   - Parsing and verifying are pure: no I/O. Files are read only by the
//     Load functions. Errors are [*checkfu.Refusal] values with the Code
//     constants of this package; no error quotes private key material,
//     and a [Signer] holds its private key only inside a closure, so no
//     printer can reach it.
package signing
