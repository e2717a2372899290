package engine

import "github.com/checkfu/checkfu"

// The refusal codes of the Engine API client. Package docker re-exports
// each one under the same name.
const (
	// CodeEngineUnreachable means no Docker engine answered at the socket.
	CodeEngineUnreachable checkfu.Code = "engine_unreachable"
	// CodeEngineVersionUnsupported means the engine's API version is below
	// the floor, 1.41 (Docker 20.10).
	CodeEngineVersionUnsupported checkfu.Code = "engine_version_unsupported"
	// CodeImageMissing means the image is not in the engine's store. The
	// client never pulls: a missing image is refused, never fetched.
	CodeImageMissing checkfu.Code = "image_missing"
	// CodeEngineObjectMissing means the engine has no container, network
	// or exec of that name or ID (404).
	CodeEngineObjectMissing checkfu.Code = "engine_object_missing"
	// CodeEngineNameConflict means the engine already has an object of
	// that name or address (409).
	CodeEngineNameConflict checkfu.Code = "engine_name_conflict"
	// CodeEngineRequestFailed means the engine refused a request (any
	// other 4xx or 5xx) or answered outside the API's shape.
	CodeEngineRequestFailed checkfu.Code = "engine_request_failed"
)
