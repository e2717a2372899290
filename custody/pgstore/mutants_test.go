package pgstore

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants needs PostgreSQL (CHECKFU_TEST_POSTGRES_DSN, which CI sets):
// without it the tests a mutant must fail are skipped, not failed.
func TestMutants(t *testing.T) {
	if mutation.Enabled() && os.Getenv("CHECKFU_TEST_POSTGRES_DSN") == "" {
		t.Skip("the pgstore mutants need CHECKFU_TEST_POSTGRES_DSN")
	}
	mutation.Run(t, mutants)
}

var mutants = []mutation.Mutant{
	{Name: "row lock in CompareAndSwap", File: "pgstore.go",
		Edits: []mutation.Edit{{Old: `LockRow: " FOR UPDATE"`, New: `LockRow: ""`}},
		Kills: "TestConcurrentCompareAndSwap"},
}
