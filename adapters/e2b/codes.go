package e2b

import "github.com/checkfu/checkfu"

// The refusal codes of the E2B adapter. A second live process on one
// sandbox is refused with acp/wire's process_already_open (the same
// condition as on the wire); a Config the caller built wrong with
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
	// CodeSandboxDestroyed: an operation on a sandbox after Destroy.
	CodeSandboxDestroyed checkfu.Code = "sandbox_destroyed"
)
