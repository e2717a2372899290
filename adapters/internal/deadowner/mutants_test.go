package deadowner_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "an owner of another namespace is dead", File: "deadowner.go",
		Edits: []mutation.Edit{{Old: "if !ok || !parsed || owner != ns {", New: "if !ok || !parsed || owner != ns && false {"}}, Kills: "TestDead"},
	{Name: "an unreadable namespace sweeps", File: "deadowner.go",
		Edits: []mutation.Edit{{Old: "if !ok || !parsed || owner != ns {", New: "if !parsed || (ok && owner != ns) {"}}, Kills: "TestDeadUnreadableNamespace"},
	{Name: "a live owner is dead", File: "deadowner.go",
		Edits: []mutation.Edit{{Old: "return pid != self && gone(pid)", New: "return pid != self"}}, Kills: "TestDead"},
	{Name: "a non-canonical name parses", File: "deadowner.go",
		Edits: []mutation.Edit{{Old: "if s == \"\" || s[0] == '0' {", New: "if s == \"\" {"}}, Kills: "TestParse"},
}
