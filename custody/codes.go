package custody

import "github.com/checkfu/checkfu"

// Refusal codes of custody. Every code is object_condition, unique across
// the module (TestCodes in the root package) and listed in docs/codes.md.
const (
	// CodeAddressMismatch is the code of the Refusal returned when a sealed
	// record does not open at the binding it is read from: it was sealed for
	// another namespace, integration or handle (it was moved), or it was
	// altered. The two cannot be told apart, by design.
	CodeAddressMismatch checkfu.Code = "address_mismatch"

	// CodeKeyVersionUnknown is the code of the Refusal returned when a sealed
	// record names a key version its keyset does not list.
	CodeKeyVersionUnknown checkfu.Code = "key_version_unknown"

	// CodeRecordMalformed is the code of the Refusal returned when sealed bytes
	// are not a sealed record of a known format.
	CodeRecordMalformed checkfu.Code = "record_malformed"

	// CodeRecordNotFound is the code of the Refusal returned when no record is
	// stored at a binding.
	CodeRecordNotFound checkfu.Code = "record_not_found"

	// CodeRecordConflict is the code of the Refusal returned by
	// [Store.CompareAndSwap] when the stored record is not the expected one.
	CodeRecordConflict checkfu.Code = "record_conflict"

	// CodeKeysetInvalid is the code of the Refusal returned when a keyset is
	// zero, or cannot be built from the keys given.
	CodeKeysetInvalid checkfu.Code = "keyset_invalid"

	// CodeSecretTooLarge is the code of the Refusal returned when a Secret
	// longer than [MaxSecretBytes] is sealed.
	CodeSecretTooLarge checkfu.Code = "secret_too_large"

	// CodeSecretDestroyed is the code of the Refusal returned when a Secret is
	// used after [Secret.Destroy], or when the zero Secret is used.
	CodeSecretDestroyed checkfu.Code = "secret_destroyed"
)
