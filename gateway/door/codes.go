package door

import "github.com/checkfu/checkfu"

// Refusal codes of the door.
const (
	// CodeRelayLineTooLong: an MCP message, in either direction, is longer
	// than MaxLineBytes. The relay ends: a skipped line may have been a
	// call or its answer, and a hole must not pass silently.
	CodeRelayLineTooLong checkfu.Code = "relay_line_too_long"
	// CodeBrokerUnreachable: the broker socket named to the door cannot
	// be dialled (no capability was granted, or the session ended).
	CodeBrokerUnreachable checkfu.Code = "broker_unreachable"
	// CodeRelayArgumentsInvalid: the door was started with arguments it does not take.
	CodeRelayArgumentsInvalid checkfu.Code = "relay_arguments_invalid"
)
