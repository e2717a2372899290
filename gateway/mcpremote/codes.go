package mcpremote

import "github.com/checkfu/checkfu"

// Refusal codes of the remote MCP client.
const (
	// CodeRemoteCallFailed: the remote MCP server did not complete the
	// call (the handshake failed, it answered with a JSON-RPC error, or
	// its result did not decode). The refusal carries none of its text.
	CodeRemoteCallFailed checkfu.Code = "remote_call_failed"
)
