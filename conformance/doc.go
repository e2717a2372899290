// Package conformance decides whether a sandbox provider revision has
// earned the security_boundary egress grade: it verifies signed
// conformance receipts against a reviewed set of attester keys.
//
// A receipt is a DSSE envelope (payloadType [PayloadType]) whose payload is
// a deterministic binary [Record]: one exact provider revision, the five
// facts a conformance matrix established, the evidence label, the
// attester's key id, the issue time and the digests of the evidence. The
// signature is pure Ed25519 over DSSE's PAE(payloadType, payload).
// docs/receipts.md specifies the bytes precisely enough for an independent
// verifier.
//
// Entry points: [ParseAttesterSet] and [LoadAttesterSet] build the reviewed
// set; [AttesterSet.Verify] says who signed which record;
// [Receipt.Certifies] and [AttesterSet.Certify] say whether a receipt
// certifies an exact pair; [EffectiveGrade] combines that with the
// provider's own advertisement. [GenerateSigner], [ParsePrivateKeyPEM] and
// [Signer.Sign] make receipts; [ParseStatement] reads the JSON form of a
// record; [ParseRecord] is the strict payload parser.
//
// Invariants:
//
//   - A grade attaches to one exact (provider, provider_revision) pair,
//     compared byte for byte. There is no prefix, semver or wildcard
//     matching anywhere.
//   - A provider's own advertisement is capped at advisory_filter. Only a
//     verified receipt for that exact pair, carrying all five facts and
//     production evidence, signed by an attester in the reviewed set,
//     lifts the ceiling to security_boundary. Nothing is inferred,
//     upgraded or averaged.
//   - The built-in attester set is empty. An [AttesterSet] is immutable:
//     trust widens only by the operator shipping a set file, never through
//     a call a provider can reach.
//   - Admission refuses any attester key that does not decode and
//     re-encode to the same bytes (PEM, DER and point), is of small order,
//     or lies outside the prime-order subgroup; and duplicate names or
//     keys. It runs once per key, when the set is loaded.
//   - Verification is strict Ed25519: everything crypto/ed25519 refuses,
//     plus small-order or non-canonical public keys (at admission) and
//     signatures whose R is of small order.
//   - The signature is verified before the payload is parsed; the parser
//     refuses trailing bytes, unknown versions, unknown fact bits and
//     non-UTF-8 or control characters, then re-encodes and compares bytes.
//   - A signature proves authorship, not truth. A [Receipt] says which
//     attester signed which facts for which pair, and nothing else.
//   - The verifier is pure: no I/O. Files are read only by the Load
//     functions. Errors are [*checkfu.Refusal] values with the Code
//     constants of this package; no error quotes private key material.
//
// The five facts are [ExactDestinationMatch], [RedirectRecheck],
// [ConnectTimePublicAddress], [AuthoritySeparation] and [DefaultDeny]; only
// the first two are self-attestable ([Fact.SelfAttestable]), and a receipt
// needs all five regardless.
package conformance
