package door_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete or loosen the door's bounds; each must be killed by the
// named test.
var mutants = []mutation.Mutant{
	{Name: "a line of exactly the bound is refused", File: "mcp.go",
		Edits: []mutation.Edit{{Old: "if len(long)+len(piece) > MaxLineBytes {", New: "if len(long)+len(piece) >= MaxLineBytes {"}},
		Kills: "TestRelayMCPLineBound"},
	{Name: "no line bound", File: "mcp.go",
		Edits: []mutation.Edit{
			{Old: "if len(long)+len(piece) > MaxLineBytes {", New: "if false {"},
			{Old: "if len(long)+len(piece) >= MaxLineBytes {", New: "if false {"},
		},
		Kills: "TestRelayMCPLineBound"},
	{Name: "no connection bound on the model relay", File: "model.go",
		Edits: []mutation.Edit{{Old: "		default:\n			c.Close()\n			continue\n", New: ""}},
		Kills: "TestServeModelConnBound"},
	{Name: "the model relay listens beyond loopback", File: "model.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !ap.Addr().IsLoopback() {", New: "if err != nil {"}},
		Kills: "TestListenModelLoopbackOnly"},
}
