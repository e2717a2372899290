package wiretest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete what alone rejects a broken provider: the suite's own
// test must then fail.
var mutants = []mutation.Mutant{
	{Name: "no Sequences", File: "wiretest.go",
		Edits: []mutation.Edit{{Old: "\t\t{\"Sequence1\", sequence(1)},\n\t\t{\"Sequence2\", sequence(2)},\n\t\t{\"Sequence3\", sequence(3)},\n", New: ""}}, Kills: "TestProviderRejectsBrokenProviders"},
}
