package acp

import "github.com/checkfu/checkfu"

// The codes of the refusals this package returns: every checkfu.Code of
// the package, in one block, each the sentinel for errors.Is on the
// returned *checkfu.Refusal. Values are object_condition and unique across
// the module.
const (
	// CodeLineTooLong: a line (one JSON-RPC message or batch) is longer than
	// the configured bound, in either direction. Nothing of it was written;
	// on input, the rest of the line was discarded without being buffered.
	CodeLineTooLong checkfu.Code = "line_too_long"
	// CodeLineTruncated: the input ended inside a line (bytes after the
	// last newline). The partial line is never delivered.
	CodeLineTruncated checkfu.Code = "line_truncated"
	// CodeLineInvalid: a line to write holds a newline byte, or is empty.
	// Nothing of it was written.
	CodeLineInvalid checkfu.Code = "line_invalid"
	// CodeMessageInvalid: a line read is not valid UTF-8, or not a
	// JSON-RPC 2.0 message or a non-empty batch (JSON array) of them; or
	// an answer lacks a field its method requires.
	CodeMessageInvalid checkfu.Code = "message_invalid"

	// CodeResumeBlobTooLarge: session/new carries a resume_blob longer
	// than SessionLimits.MaxResumeBlobBytes. Nothing was sent.
	CodeResumeBlobTooLarge checkfu.Code = "resume_blob_too_large"
	// CodeMCPServersTooMany: session/new lists more MCP servers than
	// SessionLimits.MaxMCPServers, or one server's encoding is larger than
	// SessionLimits.MaxMCPServerBytes. Nothing was sent.
	CodeMCPServersTooMany checkfu.Code = "mcp_servers_too_many"
	// CodeBuiltinToolsTooLarge: session/new lists more builtinTools than
	// SessionLimits.MaxBuiltinTools, or a tool name longer than
	// SessionLimits.MaxBuiltinToolNameBytes. Nothing was sent.
	CodeBuiltinToolsTooLarge checkfu.Code = "builtin_tools_too_large"
	// CodeContinuityTooLarge: session/new carries a continuity document
	// larger than SessionLimits.MaxContinuityBytes. Nothing was sent.
	CodeContinuityTooLarge checkfu.Code = "continuity_too_large"
	// CodeRuntimeConfigTooLarge: session/new carries a runtimeConfig
	// document larger than SessionLimits.MaxRuntimeConfigBytes. Nothing
	// was sent.
	CodeRuntimeConfigTooLarge checkfu.Code = "runtime_config_too_large"

	// CodeClientNotInitialized: a session method was called before
	// initialize was answered successfully.
	CodeClientNotInitialized checkfu.Code = "client_not_initialized"
	// CodeProtocolVersionUnsupported: the agent answered initialize with a
	// protocol version this client does not speak.
	CodeProtocolVersionUnsupported checkfu.Code = "protocol_version_unsupported"
	// CodeClientClosed: the client was closed, or its input ended or
	// failed, before the call was answered.
	CodeClientClosed checkfu.Code = "client_closed"

	// CodePermissionSessionUnknown: the agent asked permission for a
	// session that session/new did not create on this client (any
	// request before initialize is answered). The client denied it
	// without asking Config.OnPermission.
	CodePermissionSessionUnknown checkfu.Code = "permission_session_unknown"
	// CodePermissionsPending: the agent asked permission while 64
	// requests, or requests holding
	// Config.MaxPendingPermissionBytes, were already with
	// Config.OnPermission. The client denied it without asking.
	CodePermissionsPending checkfu.Code = "permissions_pending"
	// CodePermissionOptionsTooMany: a permission request offered more
	// than 64 options; the client answered it
	// "cancelled" without decoding them.
	CodePermissionOptionsTooMany checkfu.Code = "permission_options_too_many"
)
