package mutation

import (
	"testing"
)

func TestKilled(t *testing.T) {
	out := []byte("=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\n")
	if !Killed(out, "TestA|TestB") {
		t.Error("a failing named test is not a kill")
	}
	if Killed(out, "TestB") {
		t.Error("a failing test with another name counts as a kill")
	}
	if Killed([]byte("    --- FAIL: TestA/sub (0.00s)\n"), "TestA") {
		t.Error("a subtest line counts as a top-level failure")
	}
	if Killed([]byte("# pkg\n./x.go:1: syntax error\nFAIL\tpkg [build failed]\n"), "TestA") {
		t.Error("a build failure counts as a kill")
	}
}

// TestMutants runs the harness on itself: deleting gate's check must be
// caught by TestGate.
func TestMutants(t *testing.T) {
	Run(t, []Mutant{{
		Name:  "gate check deleted",
		File:  "gate_test.go",
		Edits: []Edit{{Old: `return !strings.Contains(s, "..")`, New: `return true || strings.Contains(s, "..")`}},
		Kills: "TestGate",
	}, {
		Name: "a test failing with no mutant chosen still decides",
		File: "schemata.go",
		Edits: []Edit{{Old: `				dropped[m.Name] = f
				delete(id, m.Name)`, New: `				_ = f`}},
		Kills: "TestDropNamed",
	}, {
		Name:  "the schemata never chooses the mutated copy",
		File:  "schemata.go",
		Edits: []Edit{{Old: `fmt.Fprintf(&d, "\n\tif %s == %d {\n\t\treturn %s\n\t}", switchVar, v.id, c)`, New: `fmt.Fprintf(&d, "\n\tif %s == %d {\n\t\treturn %s\n\t}", switchVar, -v.id, c)`}},
		Kills: "TestSchemata",
	}, {
		Name:  "a mutant held whose file's schemata did not build",
		File:  "schemata.go",
		Edits: []Edit{{Old: `why == "" && failed[abs]`, New: `why == "" && failed[abs] && false`}},
		Kills: "TestSchemataReasons",
	}})
}

func TestEnabled(t *testing.T) {
	t.Setenv("CHECKFU_MUTANTS", "")
	if Enabled() {
		t.Error("enabled without CHECKFU_MUTANTS=1")
	}
	t.Setenv("CHECKFU_MUTANTS", "1")
	if !Enabled() {
		t.Error("not enabled with CHECKFU_MUTANTS=1")
	}
}
