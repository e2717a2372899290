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
)
