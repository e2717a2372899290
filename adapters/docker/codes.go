package docker

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// The refusal codes of the Docker adapter. A second open while a process
// lives is refused with acp/wire's process_already_open, the same
// condition on the wire; a caller misconfiguration with
// checkfu.CodeConfigInvalid.
const (
	// CodeEngineUnreachable means no Docker engine answered at the socket.
	CodeEngineUnreachable = engine.CodeEngineUnreachable
	// CodeImageMissing means the image is not in the engine's store; the
	// adapter never pulls.
	CodeImageMissing = engine.CodeImageMissing
	// CodeEngineVersionUnsupported means the engine's API is older than
	// 1.41 (Docker 20.10).
	CodeEngineVersionUnsupported = engine.CodeEngineVersionUnsupported
	// CodeEngineObjectMissing means the engine has no such container,
	// network or exec.
	CodeEngineObjectMissing = engine.CodeEngineObjectMissing
	// CodeEngineNameConflict means the engine already has an object of
	// that name or address.
	CodeEngineNameConflict = engine.CodeEngineNameConflict
	// CodeEngineRequestFailed means the engine refused a request or
	// answered outside the API's shape.
	CodeEngineRequestFailed = engine.CodeEngineRequestFailed
	// CodeImageBuildFailed means an image could not be built without a
	// registry (a download, an extraction or a go build failed).
	CodeImageBuildFailed checkfu.Code = "image_build_failed"
	// CodeIsolationMismatch means the engine reports a container whose
	// isolation differs from what the adapter asked for; the container is
	// removed before anything runs in it.
	CodeIsolationMismatch checkfu.Code = "isolation_mismatch"
	// CodeFirewallFailed means a host firewall rule the allowlist
	// topology needs could not be installed.
	CodeFirewallFailed checkfu.Code = "firewall_failed"
)
