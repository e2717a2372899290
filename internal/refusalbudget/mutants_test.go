package refusalbudget_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "no refusal budget", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "	b.spent++\n", New: ""}},
		Kills: "TestSpendStopsAtMax"},
	{Name: "spending past the budget", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "	if b.spent >= b.max {\n		return false, false\n", New: "	if false {\n		return false, false\n"}},
		Kills: "TestSpendStopsAtMax"},
	{Name: "no refusal rate", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "		if wait <= 0 {\n", New: "		if true {\n"}},
		Kills: "TestBurstThenRate"},
	{Name: "the burst is one short", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "tokens: float64(perSecond)}", New: "tokens: float64(perSecond) - 1}"}},
		Kills: "TestBurstThenRate|TestRateBurstThenPace"},
	{Name: "a rate lets every event pass", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "	if r.bucket.wait(now) > 0 {\n", New: "	if false {\n"}},
		Kills: "TestRateBurstThenPace"},
	{Name: "a rate forgets the events it held", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "held, r.held = r.held, 0", New: "held, r.held = 0, 0"}},
		Kills: "TestRateReportsWhatItHeld"},
	{Name: "a spent budget still paces", File: "refusalbudget.go",
		Edits: []mutation.Edit{{Old: "			return ErrSpent\n", New: "			return nil\n"}},
		Kills: "TestSpendStopsAtMax"},
}
