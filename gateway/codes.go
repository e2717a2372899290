package gateway

import "github.com/checkfu/checkfu"

// Refusal codes of the gateway.
const (
	// CodeTokenInvalid: the server-owned token does not parse, is not
	// signed by the plane's key, or carries an invalid request context.
	CodeTokenInvalid checkfu.Code = "token_invalid"
	// CodeTokenExpired: the token's expiry has passed.
	CodeTokenExpired checkfu.Code = "token_expired"
)
