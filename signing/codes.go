package signing

import "github.com/checkfu/checkfu"

// Refusal codes. Every error this package returns for a refused key,
// attester set or envelope is a [*checkfu.Refusal] carrying one of these
// codes; branch on them with errors.Is.
const (
	// CodeEnvelopeMalformed: the envelope is not a well-formed DSSE
	// envelope (bad JSON, unknown or duplicate keys, bad base64, not
	// exactly one signature, larger than MaxEnvelopeSize).
	CodeEnvelopeMalformed checkfu.Code = "envelope_malformed"
	// CodePayloadTypeMismatch: the envelope's payloadType is not exactly
	// the one the verifier asked for.
	CodePayloadTypeMismatch checkfu.Code = "payload_type_mismatch"
	// CodePayloadTypeInvalid: a payloadType given to SignPayload or
	// VerifyPayload does not start with "checkfu." or is longer than
	// MaxPayloadTypeSize.
	CodePayloadTypeInvalid checkfu.Code = "payload_type_invalid"
	// CodeAttesterUnknown: the signature's key id names no attester in
	// the set. With conformance's built-in, empty set every receipt gets
	// this code.
	CodeAttesterUnknown checkfu.Code = "attester_unknown"
	// CodeSignatureInvalid: the signature does not verify under strict
	// Ed25519 for the named attester's key.
	CodeSignatureInvalid checkfu.Code = "signature_invalid"
	// CodeKeyInvalid: a key is not a canonical PEM-wrapped Ed25519 key
	// (PKIX for public keys, PKCS#8 for private keys), or its point does
	// not decode and re-encode to the same bytes.
	CodeKeyInvalid checkfu.Code = "key_invalid"
	// CodeKeySmallOrder: a public key is a point of small order, for
	// which forged signatures verify.
	CodeKeySmallOrder checkfu.Code = "key_small_order"
	// CodeKeyMixedOrder: a public key lies outside the prime-order
	// subgroup (it has a torsion component).
	CodeKeyMixedOrder checkfu.Code = "key_mixed_order"
	// CodeAttesterDuplicate: an attester set names the same attester or
	// the same key twice.
	CodeAttesterDuplicate checkfu.Code = "attester_duplicate"
	// CodeAttesterSetInvalid: an attester set file is not the documented
	// JSON shape, or an attester name is empty or not printable.
	CodeAttesterSetInvalid checkfu.Code = "attester_set_invalid"
)
