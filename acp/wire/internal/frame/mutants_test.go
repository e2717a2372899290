package frame

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants applies each hand-written mutant of the codec's checks and
// requires a named test to fail (CHECKFU_MUTANTS=1; CI sets it).
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "refusal code form", File: "frame.go",
		Edits: []mutation.Edit{{Old: "if !ValidCode(code) {", New: "if false {"}},
		Kills: "TestRefusalCodeForm"},
	{Name: "claimed length bound", File: "frame.go",
		Edits: []mutation.Edit{{Old: "if n > limit {", New: "if false {"}},
		Kills: "TestDecodeRejects|FuzzDecode"},
}
