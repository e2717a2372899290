package pglog_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
	"github.com/checkfu/checkfu/internal/pgtest"
)

// TestMutants needs the PostgreSQL server the killing tests run on: it
// skips without CHECKFU_TEST_POSTGRES_DSN (and fails under CI without it).
func TestMutants(t *testing.T) {
	if mutation.Enabled() {
		pgtest.DSN(t)
	}
	mutation.Run(t, mutants)
}

var mutants = []mutation.Mutant{
	{Name: "expected seq in Append", File: "pglog.go",
		Edits: []mutation.Edit{{Old: "\t\tif uint64(last) != expected {\n\t\t\treturn eventlog.SeqConflict(session, expected, uint64(last))\n\t\t}\n", New: ""}},
		Kills: "TestPostgresStore"},
	// pgx redacts passwords from its parse errors on a best-effort basis
	// only, and misses the one TestOpenErrorHidesDSN uses.
	{Name: "DSN redaction", File: "pglog.go",
		Edits: []mutation.Edit{{Old: "if errors.As(err, &pe) {", New: "if errors.As(err, &pe) && pe == nil {"}},
		Kills: "TestOpenErrorHidesDSN"},
	{Name: "schema name check in OpenPool", File: "pglog.go",
		Edits: []mutation.Edit{{Old: "if !validSchema(schema) {", New: "if false {"}},
		Kills: "TestOpenPool"},
	{Name: "witness compare-and-swap", File: "../internal/sqllog/sqllog.go",
		Edits: []mutation.Edit{{Old: "\tif n != 1 {\n\t\treturn eventlog.WitnessConflict(origin)\n\t}\n", New: "\t_ = n\n"}},
		Kills: "TestPostgresWitnessStore"},
}
