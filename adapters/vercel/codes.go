package vercel

import "github.com/checkfu/checkfu"

// The refusal codes of the Vercel Sandbox adapter. A second live process
// on one sandbox is refused with acp/wire's process_already_open; a
// Config the caller built wrong with checkfu.CodeConfigInvalid.
const (
	// CodeNetworkPolicyInexpressible: a network policy that Vercel's
	// deny-all, domain list (no port) and subnet lists cannot express
	// exactly. It is refused, never widened.
	CodeNetworkPolicyInexpressible checkfu.Code = "network_policy_inexpressible"
	// CodeSandboxSessionRefused: Vercel's sandbox API answered with an
	// error status or a body outside its shape.
	CodeSandboxSessionRefused checkfu.Code = "sandbox_session_refused"
	// CodeCommandStreamInvalid: a command's NDJSON stream broke its shape
	// (a bad line, an oversized line, an error line, or no final exit).
	CodeCommandStreamInvalid checkfu.Code = "command_stream_invalid"
	// CodeStdinUnsupported: a write to the stdin of a process whose
	// command API takes none. Vercel's ordinary commands read no input.
	CodeStdinUnsupported checkfu.Code = "stdin_unsupported"
)
