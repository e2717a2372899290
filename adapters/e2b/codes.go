package e2b

import "github.com/checkfu/checkfu"

// The refusal codes of the E2B adapter. Three shared codes name
// conditions other packages name too: a second live process on one
// sandbox is acp/wire's process_already_open, an operation after Destroy
// is adapters' instance_destroyed, and a Config the caller built wrong is
// checkfu.CodeConfigInvalid.
const (
	// CodeControlPlaneRefused: E2B's control plane answered a request
	// with an error status, or with a body outside its published shape.
	CodeControlPlaneRefused checkfu.Code = "control_plane_refused"
	// CodeEnvdRefused: the sandbox's envd answered a process call with a
	// Connect error, an error status, or a body outside its shape.
	CodeEnvdRefused checkfu.Code = "envd_refused"
	// CodeEnvdStreamInvalid: envd's server stream broke the Connect
	// framing (a bad envelope, an oversized message, an event out of
	// order, or an end without an exit).
	CodeEnvdStreamInvalid checkfu.Code = "envd_stream_invalid"
	// CodePolicyInexpressible: a network policy that allowOut, denyOut
	// and allow_internet_access cannot express without granting more
	// than it asks (a port other than 80 or 443, which E2B matches by
	// address only).
	CodePolicyInexpressible checkfu.Code = "policy_inexpressible"
)
