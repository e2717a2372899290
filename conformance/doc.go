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
// Keys, key ids, the DSSE envelope and attester sets are package
// signing's: [signing.ParseAttesterSet] and [signing.LoadAttesterSet]
// build the reviewed set, [signing.GenerateSigner] and
// [signing.ParsePrivateKeyPEM] make signers.
//
// Entry points: [Verify] says who signed which record; [Receipt.Certifies]
// and [Certify] say whether a receipt certifies an exact pair;
// [EffectiveGrade] combines that with the provider's own advertisement.
// [Sign] makes receipts; [ParseStatement] reads the JSON form of a record;
// [ParseRecord] is the strict payload parser; [BuiltinAttesters] is the
// empty built-in set.
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
//   - The built-in attester set is empty. A [signing.AttesterSet] is
//     immutable: trust widens only by the operator shipping a set file,
//     never through a call a provider can reach.
//   - Key admission and strict Ed25519 verification are package
//     signing's, written once: this package admits no key and checks no
//     signature itself.
//   - The signature is verified before the payload is parsed; the parser
//     refuses trailing bytes, unknown versions, unknown fact bits and
//     non-UTF-8 or control characters, then re-encodes and compares bytes.
//   - A signature proves authorship, not truth. A [Receipt] says which
//     attester signed which facts for which pair, and nothing else.
//   - The verifier is pure: no I/O. Errors are [*checkfu.Refusal] values
//     with the Code constants of this package or of package signing; no
//     error quotes private key material.
//
// The five facts are [ExactDestinationMatch], [RedirectRecheck],
// [ConnectTimePublicAddress], [AuthoritySeparation] and [DefaultDeny]; only
// the first two are self-attestable ([Fact.SelfAttestable]), and a receipt
// needs all five regardless.
package conformance
