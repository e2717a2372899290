package modelroute

import "github.com/checkfu/checkfu"

// Refusal codes of the model route.
const (
	// CodeModelPathRefused: the request is not POST on one of the
	// dialect's paths (its own, Anthropic Messages' count_tokens, or a
	// Gemini model and method): another path or sub-path, an invalid
	// model name in a Gemini path, another method, a query.
	CodeModelPathRefused checkfu.Code = "model_path_refused"
	// CodeModelRequestInvalid: the body is not a strict JSON object of at
	// most MaxRequestBytes with a non-empty string "model" and, if
	// present, a boolean "stream".
	CodeModelRequestInvalid checkfu.Code = "model_request_invalid"
	// CodeModelNotAllowed: the request's model is not one of the
	// session's allowed models.
	CodeModelNotAllowed checkfu.Code = "model_not_allowed"
	// CodeModelToolRefused: the request asks the provider to connect to
	// a destination the request names (Anthropic mcp_servers or a
	// web_fetch server tool, an OpenAI Responses mcp tool; for Gemini any
	// tool but function declarations, file data, cached content): a way
	// out of the sandbox through the provider.
	CodeModelToolRefused checkfu.Code = "model_tool_refused"
	// CodeModelBudgetExhausted: the session's model budget, in requests
	// or in tokens, is spent.
	CodeModelBudgetExhausted checkfu.Code = "model_budget_exhausted"
	// CodeModelEventTooLarge: a server-sent event from the provider is
	// longer than MaxEventBytes; the stream is cut there.
	CodeModelEventTooLarge checkfu.Code = "model_event_too_large"
	// CodeModelStreamTooLarge: a streamed answer would take more than
	// MaxStreamBytes to relay; the stream is cut before the event that
	// passes the bound.
	CodeModelStreamTooLarge checkfu.Code = "model_stream_too_large"
	// CodeModelStreamHeldTooLong: the screen would hold back more than
	// MaxHeldBytes of a streamed answer (or more than it was given); the
	// stream is cut and what was held is not written.
	CodeModelStreamHeldTooLong checkfu.Code = "model_stream_held_too_long"
)
