package acp

import (
	"fmt"

	"github.com/checkfu/checkfu"
)

// The codes of the refusals this package returns. Each is the sentinel for
// errors.Is on the returned *checkfu.Refusal.
const (
	// CodeLineTooLong: a line (one JSON-RPC message or batch) is longer than
	// the configured bound, in either direction. Nothing of it was written;
	// on input, the rest of the line was discarded without being buffered.
	CodeLineTooLong checkfu.Code = "line_too_long"
	// CodeTruncatedLine: the input ended inside a line (bytes after the
	// last newline). The partial line is never delivered.
	CodeTruncatedLine checkfu.Code = "truncated_line"
	// CodeInvalidLine: a line to write holds a newline byte, or is empty.
	CodeInvalidLine checkfu.Code = "invalid_line"
	// CodeInvalidMessage: a line is not a JSON-RPC 2.0 message or a
	// non-empty batch (JSON array) of them.
	CodeInvalidMessage checkfu.Code = "invalid_message"

	// CodeResumeBlobTooLarge: session/new carries a resume_blob longer
	// than SessionLimits.MaxResumeBlobBytes.
	CodeResumeBlobTooLarge checkfu.Code = "resume_blob_too_large"
	// CodeTooManyMCPServers: session/new lists more MCP servers than
	// SessionLimits.MaxMCPServers, or one server's encoding is larger than
	// SessionLimits.MaxMCPServerBytes.
	CodeTooManyMCPServers checkfu.Code = "too_many_mcp_servers"
	// CodeBuiltinToolsTooLarge: session/new lists more builtinTools than
	// SessionLimits.MaxBuiltinTools, or a tool name longer than
	// SessionLimits.MaxBuiltinToolNameBytes.
	CodeBuiltinToolsTooLarge checkfu.Code = "builtin_tools_too_large"
	// CodeContinuityTooLarge: session/new carries a continuity document
	// larger than SessionLimits.MaxContinuityBytes.
	CodeContinuityTooLarge checkfu.Code = "continuity_too_large"
	// CodeRuntimeConfigTooLarge: session/new carries a runtimeConfig
	// document larger than SessionLimits.MaxRuntimeConfigBytes.
	CodeRuntimeConfigTooLarge checkfu.Code = "runtime_config_too_large"

	// CodeNotInitialized: a session method was called before initialize
	// was answered successfully.
	CodeNotInitialized checkfu.Code = "not_initialized"
	// CodeUnsupportedProtocolVersion: the agent answered initialize with a
	// protocol version this client does not speak.
	CodeUnsupportedProtocolVersion checkfu.Code = "unsupported_protocol_version"
	// CodeClientClosed: the client was closed, or its input ended or
	// failed, before the call was answered.
	CodeClientClosed checkfu.Code = "client_closed"
)

// An RPCError is a JSON-RPC 2.0 error object: the agent answered a request
// with an error. It is a failure reported by the peer, not a refusal of
// this package.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is the optional "data" member, verbatim.
	Data []byte `json:"-"`
}

// maxQuotedMessage bounds how much of an agent's error message Error
// quotes, in characters.
const maxQuotedMessage = 128

// Error returns "acp: agent error CODE: " and MESSAGE quoted (Go syntax),
// cut to its first 128 characters: the agent wrote it, so its control
// bytes must not reach a log or terminal raw, nor its length fill one.
// Message holds it whole.
func (e *RPCError) Error() string {
	return fmt.Sprintf("acp: agent error %d: %.*q", e.Code, maxQuotedMessage, e.Message)
}
