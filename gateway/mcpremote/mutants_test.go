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
}
