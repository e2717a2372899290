package reveal

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "Register replaces the hook", File: "reveal.go",
		Edits: []mutation.Edit{{Old: "if !hook.CompareAndSwap(nil, &f) {", New: "if hook.Store(&f); false {"}},
		Kills: "TestHook"},
}
