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
	{Name: "the canary left by another instance stays on the host", File: "canary.go",
		Edits: []mutation.Edit{{Old: "t.Cleanup(func() { removeLeft(left) })", New: "_ = removeLeft"}}, Kills: "TestCanariesLeaveNothingBehind"},
	{Name: "Stdio does not look at stderr", File: "suite.go",
		Edits: []mutation.Edit{
			{Old: `if string(r.stdout) != "out"+e || string(r.stderr) != "err"+e {`, New: `if false {`},
			{Old: `!bytes.Equal(r.stderr, errBig) || string(r.stdout) != "ok"+e {`, New: `false {`},
			{Old: `!bytes.Equal(r.stderr, want) || string(r.stdout) != "ok"+e {`, New: `false {`},
		}, Kills: "TestSuiteRejectsBrokenProviders"},
	// Declared gaps: each adaptation applies only when its gap is
	// declared, and each DeclaredGaps check can fail.
	{Name: "Stdio skips stdin EOF whatever is declared", File: "suite.go",
		Edits: []mutation.Edit{
			{Old: "if g.NoStdin || g.StdinNoEOF {\n\t\tskipPart(t, \"multi-megabyte", New: "if true {\n\t\tskipPart(t, \"multi-megabyte"},
			{Old: "if g.StdinNoEOF {\n\t\tskipPart(t, \"cat of empty", New: "if true {\n\t\tskipPart(t, \"cat of empty"},
			{Old: "if g.NoStdin || g.StdinNoEOF {\n\t\twant := generated(500)", New: "if true {\n\t\twant := generated(500)"},
		}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "hold never needs stdin EOF", File: "gaps.go",
		Edits: []mutation.Edit{{Old: "case g.StdinNoEOF:\n\t\tscript, in, want =", New: "case true:\n\t\tscript, in, want ="}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "generated output is not compared", File: "suite.go",
		Edits: []mutation.Edit{{Old: "generator(40000, \"\"), nil); !bytes.Equal(r.stdout, want) {", New: "generator(40000, \"\"), nil); false && !bytes.Equal(r.stdout, want) {"}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "DeclaredGaps trusts NoStdin", File: "gaps.go",
		Edits: []mutation.Edit{{Old: `s.collect(t, proc, nil); string(r.stdout) != "done"+e {`, New: `s.collect(t, proc, nil); false {`}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "DeclaredGaps trusts StdinNoEOF", File: "gaps.go",
		Edits: []mutation.Edit{{Old: `!strings.HasPrefix(got, "x\n") || strings.Contains(got, "done") {`, New: `false {`}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "DeclaredGaps trusts LineFramed", File: "gaps.go",
		Edits: []mutation.Edit{{Old: `if got := out.String(); got != "" {`, New: `if got := out.String(); false {`}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "DeclaredGaps trusts TextOnly", File: "gaps.go",
		Edits: []mutation.Edit{{Old: `string(r.stdout) == want.String()+e {`, New: `r.stdout == nil && false {`}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
	{Name: "DeclaredGaps trusts KillLeaderOnly", File: "gaps.go",
		Edits: []mutation.Edit{{Old: `if r := s.run(t, inst, alive, nil); string(r.stdout) != "alive"+e {`, New: `if r := s.run(t, inst, alive, nil); false {`}}, Kills: "TestSuiteHonoursOnlyDeclaredGaps"},
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
	{Name: "Wire judges placement by the declaration", File: "wire.go",
		Edits: []mutation.Edit{{Old: `	case wired(inst) && declared != admission.PlacementRemote:
		t.Errorf(`, New: `	case false:
		t.Errorf(`}}, Kills: "TestSuiteRejectsWiredInProcess"},
	{Name: "Evidence judges placement by the declaration", File: "suite.go",
		Edits: []mutation.Edit{
			{Old: `			if wired(inst) {
				held.Placement = admission.PlacementRemote
			}`, New: ``},
		}, Kills: "TestSuiteRejectsWiredInProcess"},
	{Name: "the Drop subtest does not compare", File: "wire.go",
		Edits: []mutation.Edit{
			{Old: "if err != nil || status != 0 {\n\t\tt.Fatalf(\"Run across a drop: status %d, %v\", status, err)", New: "if false {\n\t\tt.Fatalf(\"Run across a drop: status %d, %v\", status, err)"},
			{Old: "if !bytes.Equal(out.Bytes(), in) {", New: "if false {"},
		}, Kills: "TestSuiteRejectsBrokenRemote"},
	// The Kill subtest's stdout-EOF check (a Kill that reaches only the
	// group leader) is proved by package process's mutant "Kill reaches
	// only the leader", killed by its TestAdaptertest.
	{Name: "Canaries does not look for the marks", File: "canary.go",
		Edits: []mutation.Edit{{Old: `if strings.Contains(out, c.mark) || strings.Contains(string(r.stderr), c.mark) {`, New: `if false {`}}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "Canaries accepts extra arguments", File: "canary.go",
		Edits: []mutation.Edit{{Old: `first != "argv: x0 x1" {`, New: `false {`}}, Kills: "TestSuiteRejectsBrokenProviders"},
	{Name: "declared members are not called", File: "suite.go",
		Edits: []mutation.Edit{{Old: "if d.Members.ListDir {", New: "if false {"}}, Kills: "TestSuiteRejectsBrokenProviders"},
}
