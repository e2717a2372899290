package address

import "github.com/checkfu/checkfu"

// Refusal codes of the custody address.
const (
	// CodeHandleInvalid is the code of the Refusal returned when a handle does
	// not parse.
	CodeHandleInvalid checkfu.Code = "handle_invalid"

	// CodeBindingInvalid is the code of the Refusal returned when a binding's
	// namespace or integration is not a valid name, or its handle is zero.
	CodeBindingInvalid checkfu.Code = "binding_invalid"
)
