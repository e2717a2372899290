package sqliteutil

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "CreateSchema retry", File: "sqliteutil.go",
		Edits: []mutation.Edit{{Old: "if err == nil || !IsBusy(err) || time.Now().After(deadline) {", New: "if err == nil || !IsBusy(err) || time.Now().After(deadline) || true {"}},
		Kills: "TestCreateSchemaWaitsOutABusyFile"},
}
