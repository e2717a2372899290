package runnertest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants applies each mutant of the scripted agent's own checks
// (CHECKFU_MUTANTS=1).
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "an upstream's refusal header said as it is", File: "agent.go",
		Edits: []mutation.Edit{{Old: "\t\tif !isCode(code) {", New: "\t\tif false {"}},
		Kills: "TestGetSteps"},
	{Name: "a failed GET's error said as it is", File: "agent.go",
		Edits: []mutation.Edit{{Old: `" -> no answer: " + checkfu.Quote(err.Error())`, New: `" -> no answer: " + err.Error()`}},
		Kills: "TestGetSteps"},
}
