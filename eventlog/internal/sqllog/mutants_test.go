package sqllog

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "Wait one short", File: "wait.go",
		Edits: []mutation.Edit{{Old: "if h.Seq >= seq {", New: "if h.Seq+1 >= seq {"}},
		Kills: "TestWaitReturnsAtSeq"},
	// Without the close, TestNotifyWakesWait would hang until -timeout;
	// TestChangesZeroValue fails at once.
	{Name: "Notify without close", File: "wait.go",
		Edits: []mutation.Edit{{Old: "\tif c.changed != nil {\n\t\tclose(c.changed)\n\t}\n", New: ""}},
		Kills: "TestChangesZeroValue"},
}
