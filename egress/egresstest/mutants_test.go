package egresstest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete what alone rejects a broken decider: the suite's own
// test must then fail.
var mutants = []mutation.Mutant{
	{Name: "no SequenceAgreesWithReference", File: "suite.go",
		Edits: []mutation.Edit{{Old: "\tsuitetest.Run(t, \"SequenceAgreesWithReference\", func(t T) { testSequence(t, newDecider) })\n", New: ""}}, Kills: "TestDeciderRejectsBrokenDeciders"},
}
