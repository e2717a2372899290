package pipeline

import "github.com/checkfu/checkfu"

// Refusal codes of the call pipeline.
const (
	// CodeChannelUnknown: the call came over a channel this pipeline did
	// not open, or one already closed.
	CodeChannelUnknown checkfu.Code = "channel_unknown"
	// CodeProviderFailed: the provider answered the call with an HTTP
	// error status (4xx or 5xx). The caller gets the answer; the result
	// and approval_result events record the call as failed.
	CodeProviderFailed checkfu.Code = "provider_failed"
	// CodeRemoteToolFailed: the remote MCP tool returned a result it
	// flagged as an error (isError). The caller gets the result; the
	// result and approval_result events record the call as failed.
	CodeRemoteToolFailed checkfu.Code = "remote_tool_failed"
)
