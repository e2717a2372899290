package acp

import (
	"encoding/base64"

	"github.com/checkfu/checkfu"
)

// SessionLimits bound the session/new fields a Runner sends to an agent.
// They are checked by [SessionLimits.Check], which the [Client] calls
// before it encodes the frame, so an over-limit request never reaches the
// process. A zero field means the documented default, never "unlimited":
// the zero SessionLimits is the defaults.
type SessionLimits struct {
	// MaxResumeBlobBytes bounds len(ResumeBlob), decoded. Default 1 MiB,
	// the size the output side already bounds the blob to when the agent
	// produces it; base64 makes it about 1.37 MiB on the wire.
	MaxResumeBlobBytes int
	// MaxMCPServers bounds len(MCPServers). Default 64.
	MaxMCPServers int
	// MaxMCPServerBytes bounds the JSON encoding of each MCP server.
	// Default 64 KiB.
	MaxMCPServerBytes int
	// MaxBuiltinTools bounds len(BuiltinTools). Default 256.
	MaxBuiltinTools int
	// MaxBuiltinToolNameBytes bounds each tool name. Default 256.
	MaxBuiltinToolNameBytes int
	// MaxContinuityBytes bounds len(Continuity). Default 1 MiB.
	MaxContinuityBytes int
	// MaxRuntimeConfigBytes bounds len(RuntimeConfig). Default 256 KiB.
	MaxRuntimeConfigBytes int
}

// The defaults of SessionLimits, each defined once.
const (
	DefaultMaxResumeBlobBytes      = 1 << 20
	DefaultMaxMCPServers           = 64
	DefaultMaxMCPServerBytes       = 64 << 10
	DefaultMaxBuiltinTools         = 256
	DefaultMaxBuiltinToolNameBytes = 256
	DefaultMaxContinuityBytes      = 1 << 20
	DefaultMaxRuntimeConfigBytes   = 256 << 10
)

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Check returns nil when every bounded field of req is within l, and
// otherwise a *checkfu.Refusal with the code of the first field over its
// limit: [CodeResumeBlobTooLarge], [CodeMCPServersTooMany],
// [CodeBuiltinToolsTooLarge], [CodeContinuityTooLarge] or
// [CodeRuntimeConfigTooLarge]. Check does no I/O and never quotes the
// content of a field (a resume blob or a config may be sensitive).
func (l SessionLimits) Check(req *NewSessionRequest) error {
	if max := orDefault(l.MaxResumeBlobBytes, DefaultMaxResumeBlobBytes); len(req.ResumeBlob) > max {
		return checkfu.Refuse(CodeResumeBlobTooLarge,
			"acp: session/new resume_blob of %d bytes (%d as base64) exceeds the maximum of %d bytes; nothing was sent",
			len(req.ResumeBlob), base64.StdEncoding.EncodedLen(len(req.ResumeBlob)), max)
	}
	if max := orDefault(l.MaxMCPServers, DefaultMaxMCPServers); len(req.MCPServers) > max {
		return checkfu.Refuse(CodeMCPServersTooMany,
			"acp: session/new lists %d mcpServers, more than the maximum of %d; nothing was sent", len(req.MCPServers), max)
	}
	maxServer := orDefault(l.MaxMCPServerBytes, DefaultMaxMCPServerBytes)
	for i, s := range req.MCPServers {
		if len(s) > maxServer {
			return checkfu.Refuse(CodeMCPServersTooMany,
				"acp: session/new mcpServers[%d] is %d bytes, more than the maximum of %d; nothing was sent", i, len(s), maxServer)
		}
	}
	if max := orDefault(l.MaxBuiltinTools, DefaultMaxBuiltinTools); len(req.BuiltinTools) > max {
		return checkfu.Refuse(CodeBuiltinToolsTooLarge,
			"acp: session/new lists %d builtinTools, more than the maximum of %d; nothing was sent", len(req.BuiltinTools), max)
	}
	maxName := orDefault(l.MaxBuiltinToolNameBytes, DefaultMaxBuiltinToolNameBytes)
	for i, t := range req.BuiltinTools {
		if len(t) > maxName {
			return checkfu.Refuse(CodeBuiltinToolsTooLarge,
				"acp: session/new builtinTools[%d] is a name of %d bytes, more than the maximum of %d; nothing was sent", i, len(t), maxName)
		}
	}
	if max := orDefault(l.MaxContinuityBytes, DefaultMaxContinuityBytes); len(req.Continuity) > max {
		return checkfu.Refuse(CodeContinuityTooLarge,
			"acp: session/new continuity of %d bytes exceeds the maximum of %d; nothing was sent", len(req.Continuity), max)
	}
	if max := orDefault(l.MaxRuntimeConfigBytes, DefaultMaxRuntimeConfigBytes); len(req.RuntimeConfig) > max {
		return checkfu.Refuse(CodeRuntimeConfigTooLarge,
			"acp: session/new runtimeConfig of %d bytes exceeds the maximum of %d; nothing was sent", len(req.RuntimeConfig), max)
	}
	return nil
}
