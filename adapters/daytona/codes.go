package daytona

import "github.com/checkfu/checkfu"

// The refusal codes of the Daytona adapter. A second live process on one
// sandbox is refused with acp/wire's process_already_open; a Config the
// caller built wrong with checkfu.CodeConfigInvalid.
const (
	// CodeAllowlistInexpressible: a network policy Daytona's
	// networkBlockAll, networkAllowList (at most 10 IPv4 CIDRs, every
	// port) and domainAllowList (no port) cannot express exactly. It is
	// refused, never widened to fit.
	CodeAllowlistInexpressible checkfu.Code = "allowlist_inexpressible"
	// CodeSandboxRequestRefused: Daytona's sandbox API answered with an
	// error status or a body outside its published shape, or the sandbox
	// did not start.
	CodeSandboxRequestRefused checkfu.Code = "sandbox_request_refused"
	// CodeToolboxRefused: the sandbox's toolbox (session, exec, input,
	// logs) answered with an error status or a body outside its shape.
	CodeToolboxRefused checkfu.Code = "toolbox_refused"
	// CodeLogFrameInvalid: the command-log WebSocket broke its framing
	// (a masked or oversized frame, a bad handshake, a protocol error).
	CodeLogFrameInvalid checkfu.Code = "log_frame_invalid"
	// CodeStdinInexpressible: stdin that a Daytona session cannot carry
	// exactly: bytes that are not UTF-8, a last line without a newline
	// (the daemon would add one), or end of input (a session's input
	// pipe never closes).
	CodeStdinInexpressible checkfu.Code = "stdin_inexpressible"
)
