package mutation

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const fixture = "testdata/schemata/main.go"

// fixtureMutants edit the fixture; each wants main's line as printed with
// it chosen. The last three cannot share a build.
var fixtureMutants = []struct {
	m    Mutant
	want string
}{
	{Mutant{Name: "unnamed receiver", Edits: []Edit{{Old: `return "box"`, New: `return "crate"`}}}, "crate 6 x-y 7 [orig] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "blank and variadic", Edits: []Edit{{Old: `s += m`, New: `s -= m`}}}, "box -4 x-y 7 [orig] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "variadic function", Edits: []Edit{{Old: `strings.Join(parts, sep)`, New: `strings.Join(parts, sep+sep)`}}}, "box 6 x--y 7 [orig] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "generic", Edits: []Edit{{Old: `return xs[0]`, New: `return xs[1]`}}}, "box 6 x-y 8 [orig] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "no results", Edits: []Edit{{Old: `"orig")`, New: `"mutant")`}}}, "box 6 x-y 7 [mutant] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "labels", Edits: []Edit{{Old: `continue outer`, New: `break outer`}}}, "box 6 x-y 7 [orig] 1 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "parameter redeclared", Edits: []Edit{{Old: `r, err = x, nil`, New: `x, y := x+1, 0
	r, err = x+y, nil`}}}, "box 6 x-y 7 [orig] 3 6 1 [a b c] [p q] 3"},
	{Mutant{Name: "unnamed parameters", Edits: []Edit{{Old: `int { return 1 }`, New: `int { return 2 }`}}}, "box 6 x-y 7 [orig] 3 5 2 [a b c] [p q] 3"},
	{Mutant{Name: "table row", Edits: []Edit{{Old: `"b", `, New: ``}}}, "box 6 x-y 7 [orig] 3 5 1 [a c] [p q] 3"},
	{Mutant{Name: "same function again", Edits: []Edit{{Old: `return "box"`, New: `return "bin"`}}}, "bin 6 x-y 7 [orig] 3 5 1 [a b c] [p q] 3"},
	{Mutant{Name: "array length", Edits: []Edit{{Old: `"p", "q"`, New: `"p"`}}}, ""},
	{Mutant{Name: "constant", Edits: []Edit{{Old: `limit = 3`, New: `limit = 4`}}}, ""},
	{Mutant{Name: "signature", Edits: []Edit{{Old: `func ints(int, int) int`, New: `func ints(int, int64) int`}}}, ""},
}

const fixtureOriginal = "box 6 x-y 7 [orig] 3 5 1 [a b c] [p q] 3"

// TestSchemata builds the fixture once from a schemata overlay and runs it
// with each mutant chosen: each must print what its own edit prints, and
// with none chosen the fixture must print what it prints unmutated.
func TestSchemata(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fixture")
	}
	var mutants []Mutant
	for _, fm := range fixtureMutants {
		m := fm.m
		m.File, m.Kills = fixture, "TestNothing"
		mutants = append(mutants, m)
	}
	s, err := planSchemata(mutants, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fm := range fixtureMutants {
		_, held := s.id[fm.m.Name]
		if held != (fm.want != "") {
			t.Errorf("mutant %q: held %v, alone because %q", fm.m.Name, held, s.alone[fm.m.Name])
		}
	}
	bin := buildOverlay(t, s.overlay)
	run := func(id string) string {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), ActiveEnv+"="+id)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fixture with mutant %q: %v\n%s", id, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(""); got != fixtureOriginal {
		t.Errorf("no mutant chosen: got %q, want %q", got, fixtureOriginal)
	}
	for _, fm := range fixtureMutants {
		id, ok := s.id[fm.m.Name]
		if !ok {
			continue
		}
		if got := run(strconv.Itoa(id)); got != fm.want {
			t.Errorf("mutant %q: got %q, want %q", fm.m.Name, got, fm.want)
		}
	}
	// A mutant's own build prints the same as the schemata build with it
	// chosen: the fixture's expectations are the mutated code's, not the
	// schemata's.
	m := mutants[1]
	text, err := apply(m)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(fixture)
	alone := buildOverlay(t, map[string]string{abs: text})
	out, err := exec.Command(alone).CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != fixtureMutants[1].want {
		t.Errorf("the mutant's own build prints %q (%v), want %q", got, err, fixtureMutants[1].want)
	}
}

// TestSchemataReasons pins why a mutant is built alone.
func TestSchemataReasons(t *testing.T) {
	var mutants []Mutant
	for _, fm := range fixtureMutants {
		m := fm.m
		m.File, m.Kills = fixture, "TestNothing"
		mutants = append(mutants, m)
	}
	mutants = append(mutants, Mutant{Name: "test file", File: "gate_test.go", Edits: []Edit{{Old: `"..")`, New: `"...")`}}, Kills: "TestGate"})
	s, err := planSchemata(mutants, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"array length": "it edits an array whose length its literal sets",
		"constant":     "it edits a declaration other than a function or a variable",
		"signature":    "it edits a function's signature",
		"test file":    "it edits a test file",
	} {
		if got := s.alone[name]; got != want {
			t.Errorf("mutant %q: alone because %q, want %q", name, got, want)
		}
	}
	abs, _ := filepath.Abs(fixture)
	s, err = planSchemata(mutants, map[string]bool{abs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.id) != 0 {
		t.Errorf("%d mutants held in a file whose schemata failed to build", len(s.id))
	}
}

// buildOverlay builds the fixture with overlay and returns the binary.
func buildOverlay(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	replace := map[string]string{}
	n := 0
	for abs, text := range files {
		n++
		p := filepath.Join(dir, strconv.Itoa(n)+".go")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[abs] = p
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, []byte(mustJSON(t, map[string]any{"Replace": replace})), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fixture")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command on PATH")
	}
	if out, err := exec.Command(goBin, "build", "-o", bin, "-overlay", ov, "./testdata/schemata").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDropNamed: a test that fails with no mutant chosen decides none of
// the mutants that name it.
func TestDropNamed(t *testing.T) {
	mutants := []Mutant{{Name: "a", Kills: "TestA|TestB"}, {Name: "b", Kills: "TestC"}, {Name: "c", Kills: "TestAB"}}
	id := map[string]int{"a": 1, "b": 2, "c": 3}
	got := dropNamed(id, mutants, failedTests([]byte("--- FAIL: TestB (0.01s)\n    --- FAIL: TestC/sub (0.00s)\n")))
	if len(got) != 1 || got["a"] != "TestB" {
		t.Errorf("dropped %v, want a for TestB", got)
	}
	if _, ok := id["a"]; ok || len(id) != 2 {
		t.Errorf("held after the baseline: %v", id)
	}
}
