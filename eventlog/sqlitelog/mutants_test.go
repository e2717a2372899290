package sqlitelog_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "expected seq in Append", File: "sqlitelog.go",
		Edits: []mutation.Edit{{Old: "\tif last != expected {\n\t\treturn eventlog.SeqConflict(session, expected, last)\n\t}\n", New: ""}},
		Kills: "TestSQLiteStore"},
	{Name: "secure_delete", File: "sqlitelog.go",
		Edits: []mutation.Edit{{Old: "\tq.Add(\"_pragma\", \"secure_delete(ON)\")\n", New: ""}},
		Kills: "TestShredOnDisk"},
	{Name: "WAL truncation in Shred", File: "sqlitelog.go",
		Edits: []mutation.Edit{{Old: "`PRAGMA wal_checkpoint(TRUNCATE)`", New: "`PRAGMA wal_checkpoint(PASSIVE)`"}},
		Kills: "TestShredOnDisk"},
	// The keyed digest is eventlog's; a bare SHA-256 of the content in a
	// zero-data-retention log is what the on-disk scan looks for. (Sealing
	// content in such a log is eventlog's "zero-data-retention branch"
	// mutant.)
	{Name: "bare content digest", File: "../keys.go",
		Edits: []mutation.Edit{{Old: "\tm := hmac.New(sha256.New, k.mac[:])\n\tm.Write(appendString([]byte(\"checkfu/eventlog/digest/v1\\x00\"), session))\n", New: "\tm := sha256.New()\n\t_ = session\n"}},
		Kills: "TestZeroDataRetentionOnDisk"},
	{Name: "shred of a row that is gone", File: "../internal/sqllog/sqllog.go",
		Edits: []mutation.Edit{{Old: "\tif n != 1 {\n\t\treturn eventlog.NothingToShred(session, seq)\n\t}\n", New: "\t_ = n\n"}},
		Kills: "TestSQLiteStore"},
	{Name: "witness compare-and-swap", File: "../internal/sqllog/sqllog.go",
		Edits: []mutation.Edit{{Old: "\tif n != 1 {\n\t\treturn eventlog.WitnessConflict(origin)\n\t}\n", New: "\t_ = n\n"}},
		Kills: "TestSQLiteWitnessStore"},
	{Name: "rt: witness update ignores the state it replaces", File: "../internal/sqllog/sqllog.go",
		Edits: []mutation.Edit{{Old: "WHERE origin = $1 AND size = $2 AND hash = $3", New: "WHERE origin = $1 AND $2 = $2 AND $3 = $3"}},
		Kills: "TestSQLiteWitnessRaceForks"},
}
