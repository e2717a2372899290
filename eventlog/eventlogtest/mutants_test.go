package eventlogtest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete what alone rejects a broken store: the suite's own test
// must then fail.
var mutants = []mutation.Mutant{
	{Name: "no Sequence", File: "suite.go",
		Edits: []mutation.Edit{{Old: "\t\t{\"Sequence\", testSequence},\n", New: ""}}, Kills: "TestStoreRejectsBrokenStores"},
	{Name: "Sequence never reopens", File: "sequence.go",
		Edits: []mutation.Edit{{Old: "\t\"content\", \"read\", \"read\", \"read store page\", \"read store page\", \"verify\", \"reopen\",\n", New: "\t\"content\", \"read\", \"read\", \"read store page\", \"read store page\", \"verify\",\n"}}, Kills: "TestStoreRejectsBrokenStores"},
}
