package adaptertest

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// Each mutant deletes one check of the suite; a broken provider that
// check exists to reject must then get through.
var mutants = []mutation.Mutant{
	// Where two checks catch the same bug (defence in depth), the mutant
	// deletes both: the point is that the subtest can fail at all.
	{Name: "Stdio does not look at stderr", File: "suite.go",
		Edits: []mutation.Edit{
			{Old: `if string(r.stdout) != "out" || string(r.stderr) != "err" {`, New: `if false {`},
			{Old: `!bytes.Equal(r.stderr, errBig) || string(r.stdout) != "ok" {`, New: `false {`},
		}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "ExitCodes accepts any status", File: "suite.go",
		Edits: []mutation.Edit{{Old: "if r := s.run(t, inst, \"exit \"+strconv.Itoa(code), nil); r.status != code || r.err != nil {", New: "if r := s.run(t, inst, \"exit \"+strconv.Itoa(code), nil); false && r.status != code {"}}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "OneLiveProcess accepts a second process", File: "suite.go",
		Edits: []mutation.Edit{{Old: "t.Fatalf(\"a second OpenProcess while one lives = %v, want %s\", err, wire.CodeProcessAlreadyOpen)", New: "_ = err"}}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "network none is not tried", File: "suite.go",
		Edits: []mutation.Edit{
			{Old: `if r := probe("dial", ln.Addr().String()); r.status != ProbeFailed || accepted.Load() != 0 {`, New: `if r := probe("dial", ln.Addr().String()); false && r.status != ProbeFailed {`},
			{Old: `if r := probe("interfaces"); r.status != ProbeOK || len(bytes.TrimSpace(r.stdout)) != 0 {`, New: `if r := probe("interfaces"); false && r.status != ProbeOK {`},
		}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "Evidence is not matched", File: "suite.go",
		Edits: []mutation.Edit{{Old: `t.Errorf("mode %s, instance %s: %v", mode, spec.ID, err)`, New: `_ = err`}}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "the Drop subtest does not compare", File: "wire.go",
		Edits: []mutation.Edit{
			{Old: "if err != nil || status != 0 {\n\t\tt.Fatalf(\"Run across a drop: status %d, %v\", status, err)", New: "if false {\n\t\tt.Fatalf(\"Run across a drop: status %d, %v\", status, err)"},
			{Old: "if !bytes.Equal(out.Bytes(), in) {", New: "if false {"},
		}, Kills: "TestSuiteRejectsBrokenRemote"},
	// The Kill subtest's stdout-EOF check (a Kill that reaches only the
	// group leader) is proved by package process's mutant "Kill reaches
	// only the leader", killed by its TestAdaptertest.
	{Name: "declared members are not called", File: "suite.go",
		Edits: []mutation.Edit{{Old: "if d.Members.ListDir {", New: "if false {"}}, Kills: "TestSuiteRejectsBrokenProviders"},
}
