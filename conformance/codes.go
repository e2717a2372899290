package conformance

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance/internal/wire"
)

// Refusal codes. Every error this package returns for a refused receipt
// is a [*checkfu.Refusal] carrying one of these codes, or one of package
// signing's for the envelope, the key and the attester set; branch on
// them with errors.Is.
const (
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
)
