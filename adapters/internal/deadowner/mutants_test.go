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
	{Name: "an orphan's owner need not be dead", File: "orphan.go",
		Edits: []mutation.Edit{{Old: "return ok && dashed && Dead(owner)", New: "return ok && dashed && (Dead(owner) || owner != \"\")"}}, Kills: "TestOrphan"},
	{Name: "an orphan needs no dash after its owner", File: "orphan.go",
		Edits: []mutation.Edit{{Old: "return ok && dashed && Dead(owner)", New: "return ok && (dashed || true) && Dead(owner)"}}, Kills: "TestOrphan"},
	{Name: "an orphan needs no prefix", File: "orphan.go",
		Edits: []mutation.Edit{{Old: "return ok && dashed && Dead(owner)", New: "return (ok || true) && dashed && Dead(owner)"}}, Kills: "TestOrphan"},
	{Name: "Orphans yields every name under the prefix", File: "orphans_unix.go",
		Edits: []mutation.Edit{{Old: "if Orphan(name, prefix) && !yield(dfd, name) {", New: "if !yield(dfd, name) {"}}, Kills: "TestOrphans"},
	{Name: "Orphans leaves its descriptor open", File: "orphans_unix.go",
		Edits: []mutation.Edit{{Old: "\t\tdefer unix.Close(dfd)\n", New: "\t\tdefer func() {}()\n"}}, Kills: "TestOrphans"},
}
