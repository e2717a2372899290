package broker

import "github.com/checkfu/checkfu"

// Refusal codes of the broker.
const (
	// CodeDescriptorUnregistered: a profile tool (such as one a remote
	// MCP server advertises) names a capability, tool, operation or
	// resource that no exact static registration fixes. Default deny: it
	// is not exposed, whatever URL it advertises.
	CodeDescriptorUnregistered checkfu.Code = "descriptor_unregistered"
	// CodeDescriptorInvalid: a registered tool's input schema is not a
	// JSON object schema of type "object", which MCP requires.
	CodeDescriptorInvalid checkfu.Code = "descriptor_invalid"
	// CodeDescriptorDuplicated: two profile tools have the same tool
	// name; tools/call could reach only one of them, whichever was added
	// last, under the name of both.
	CodeDescriptorDuplicated checkfu.Code = "descriptor_duplicated"
	// CodeFrameTooLong: sandbox code sent an MCP message longer than
	// MaxLineBytes; its connection ends.
	CodeFrameTooLong checkfu.Code = "frame_too_long"
	// CodeConnectionsExceeded: sandbox code opened more than
	// MaxConnections connections at once; the extra one is closed.
	CodeConnectionsExceeded checkfu.Code = "connections_exceeded"
	// CodeCallMalformed: a tools/call the MCP session could not take and
	// answered itself (sent before initialize, as a notification, or
	// with params that are not an object with a string name). It is
	// recorded, never forwarded.
	CodeCallMalformed checkfu.Code = "call_malformed"
	// CodeRefusalsExceeded: the channel's sandbox code caused more than
	// MaxRefusals refusals; the broker closed the channel and serves
	// nothing more.
	CodeRefusalsExceeded checkfu.Code = "refusals_exceeded"
	// CodeModelRouteUnregistered: sandbox code sent an HTTP (model
	// route) request on the socket, and the session's profile lists no
	// model registration.
	CodeModelRouteUnregistered checkfu.Code = "model_route_unregistered"
	// CodeModelBytesExceeded: a model request's body would take the
	// bodies the broker holds at once past MaxModelHeldBytes; it is
	// refused (HTTP 503) and may be retried once a call has ended.
	CodeModelBytesExceeded checkfu.Code = "model_bytes_exceeded"
)
