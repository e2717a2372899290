package conformance

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance/internal/wire"
)

// Refusal codes. Every error this package returns for a refused receipt,
// key or attester set is a [*checkfu.Refusal] carrying one of these codes;
// branch on them with errors.Is.
const (
	// CodeEnvelopeMalformed: the receipt is not a well-formed DSSE
	// envelope (bad JSON, unknown or duplicate keys, bad base64, not
	// exactly one signature).
	CodeEnvelopeMalformed checkfu.Code = "envelope_malformed"
	// CodePayloadTypeMismatch: the envelope's payloadType is not exactly
	// [PayloadType].
	CodePayloadTypeMismatch checkfu.Code = "payload_type_mismatch"
	// CodeAttesterUnknown: the signature's key id names no attester in
	// the reviewed set. With the built-in, empty set every receipt gets
	// this code.
	CodeAttesterUnknown checkfu.Code = "attester_unknown"
	// CodeSignatureInvalid: the signature does not verify under strict
	// Ed25519 for the named attester's key.
	CodeSignatureInvalid checkfu.Code = "signature_invalid"
	// CodePayloadNoncanonical: the signed payload is not the canonical
	// encoding of a valid record (truncated, trailing bytes, unknown
	// version, unknown fact bits, bad strings, does not re-encode).
	CodePayloadNoncanonical = wire.CodePayloadNoncanonical
	// CodeKeyIDMismatch: the record names a different attester key than
	// the one that signed it.
	CodeKeyIDMismatch checkfu.Code = "key_id_mismatch"
	// CodeProviderMismatch: the receipt is for another provider.
	CodeProviderMismatch checkfu.Code = "provider_mismatch"
	// CodeRevisionMismatch: the receipt is for another revision of the
	// provider. Revisions are compared byte for byte.
	CodeRevisionMismatch checkfu.Code = "revision_mismatch"
	// CodeFactMissing: the receipt lacks at least one of the five facts,
	// so it certifies nothing.
	CodeFactMissing checkfu.Code = "fact_missing"
	// CodeLabelNotProduction: the receipt's evidence is mock or isolated.
	CodeLabelNotProduction checkfu.Code = "label_not_production"
	// CodeRecordInvalid: a record (or the JSON statement of one) has a
	// field out of range, so it cannot be signed.
	CodeRecordInvalid = wire.CodeRecordInvalid
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
