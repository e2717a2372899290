package custodytest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete one case of the exposure walker at a time, and each
// subtest of the store and runtime suites that alone rejects a broken
// implementation (the suites' own tests must then fail).
var mutants = []mutation.Mutant{
	{Name: "store suite: no Sequence", File: "store.go",
		Edits: []mutation.Edit{{Old: "\t\t{\"Sequence\", testSequence},\n", New: ""}}, Kills: "TestStoreRejectsBrokenStores"},
	{Name: "store suite: no ConcurrentCompareAndSwap", File: "store.go",
		Edits: []mutation.Edit{{Old: "\t\t{\"ConcurrentCompareAndSwap\", testConcurrentCAS},\n", New: ""}}, Kills: "TestStoreRejectsBrokenStores"},
	{Name: "runtime suite: no Sequence", File: "runtime.go",
		Edits: []mutation.Edit{{Old: "suitetest.Run(t, \"Sequence\", func(t T) { testRuntimeSequence(t, newRig(t)) })", New: ""}}, Kills: "TestRuntimeRejectsBrokenRuntimes"},
	{Name: "walker: struct fields", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\t\tw.typ(f.Type(), path+\".\"+f.Name(), false)\n", New: "\t\t\t_ = f\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: pointers", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Elem(), path+\" -> *\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: slices", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Elem(), path+\" -> []\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: arrays", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Elem(), path+\" -> [n]\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: map values", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Elem(), path+\" -> map value\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: map keys", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Key(), path+\" -> map key\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: channels", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.typ(t.Elem(), path+\" -> chan\", false)\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
	{Name: "walker: func results", File: "exposure.go",
		Edits: []mutation.Edit{{Old: "\t\tw.sig(t, path+\" -> func result\", path+\" -> func param\")\n", New: "\n"}}, Kills: "TestCheckExposureCatchesPlantedViolations"},
}
