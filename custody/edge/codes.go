package edge

import "github.com/checkfu/checkfu"

// Refusal codes of the outbound edge.
const (
	// CodeCredentialUnusable: the credential cannot be attached (it was
	// destroyed, or it is not a valid header value). Nothing was sent
	// with it.
	CodeCredentialUnusable checkfu.Code = "credential_unusable"
	// CodeCredentialEchoed: the provider's response contains the
	// credential; the response is withheld from the caller.
	CodeCredentialEchoed checkfu.Code = "credential_echoed"
	// CodeResponseTooLarge: the response body is larger than
	// MaxResponseBytes; it is withheld.
	CodeResponseTooLarge checkfu.Code = "response_too_large"
	// CodeResponseEncoded: the response body is in a content coding the
	// edge cannot inspect for the credential (anything but identity, and
	// the gzip the transport asked for and decoded); it is withheld.
	CodeResponseEncoded checkfu.Code = "response_encoded"
	// CodeRemoteRequestRefused: an exchange of a remote MCP tool call is
	// not one the registration allows (another URL, method or header, a
	// JSON-RPC message other than the handshake and the one authorized
	// tools/call, or more exchanges than a call needs); it was not sent.
	CodeRemoteRequestRefused checkfu.Code = "remote_request_refused"
	// CodeNotAuthorized: the call handed to the edge is not one the call
	// pipeline authorized (the zero Authorized), or it was sent already;
	// nothing was opened or sent.
	CodeNotAuthorized checkfu.Code = "not_authorized"
)
