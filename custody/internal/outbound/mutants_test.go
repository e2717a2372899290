package outbound

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants weaken the query builder's refusals one at a time.
var mutants = []mutation.Mutant{
	{Name: "a query member that is not a scalar", File: "outbound.go",
		Edits: []mutation.Edit{{Old: "\t\t\tbad[k] = true\n", New: "\t\t\t_ = bad\n"}},
		Kills: "TestQueryOf|FuzzQueryOf"},
	{Name: "query arguments not checked as JSON", File: "outbound.go",
		Edits: []mutation.Edit{{Old: "if !json.Valid(body) {", New: "if len(body) == 0 {"}},
		Kills: "TestQueryOf|FuzzQueryOf"},
}
