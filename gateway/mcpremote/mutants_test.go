package mcpremote_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete, one at a time, each bound of the remote MCP client;
// each must be killed by the named test. (The client's other checks are
// in package gateway's remoteMutants, where the remote rig lives.)
var mutants = []mutation.Mutant{
	{Name: "a call's deadline", File: "mcpremote.go",
		Edits: []mutation.Edit{{Old: "\tctx, cancel := context.WithTimeout(ctx, maxCallDuration)\n\tdefer cancel()\n", New: ""}},
		Kills: "TestCallEndsAtItsDeadline"},
	{Name: "content items keep their _meta", File: "mcpremote.go",
		Edits: []mutation.Edit{{Old: "content, err := withoutMeta(res.Content)", New: "content, err := res.Content, error(nil)"}},
		Kills: "TestResultWithoutMeta"},
	{Name: "an embedded resource keeps its _meta", File: "mcpremote.go",
		Edits: []mutation.Edit{{Old: "\t\t\t\tr.Meta = nil\n", New: ""}},
		Kills: "TestResultWithoutMeta"},
	{Name: "sampling content in a tool result", File: "mcpremote.go",
		Edits: []mutation.Edit{{Old: "\t\tdefault:\n\t\t\treturn nil, checkfu.Refuse(", New: "\t\tdefault:\n\t\t\tout = append(out, c)\n\t\t\tcontinue\n\t\t\treturn nil, checkfu.Refuse("}},
		Kills: "TestResultWithoutMeta"},
}
