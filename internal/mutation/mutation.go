// Package mutation applies hand-written mutants to a package's source and
// proves that a named test kills each one. A mutant deletes or inverts one
// security check; a test that still passes with the check gone cannot
// fail, and is a defect.
//
// Invariants:
//
//   - The working tree is never written: mutants are built through
//     `go test -overlay`, from scratch copies of the files they edit.
//   - Most mutants share one build of their package (mutant schemata): the
//     functions and composite-literal variables they edit dispatch, at run
//     time, to each mutant's copy (see ActiveEnv). A mutant is counted
//     killed there only when its named tests pass in that build with no
//     mutant chosen and fail with it chosen. Every other outcome (a
//     survivor, a crash, a test failing with no mutant chosen, a schemata
//     that does not compile) is decided by the mutant's own build, so a
//     survivor is always confirmed exactly as it was before the schemata.
//   - A mutant whose edit does not apply (the old text occurs other than
//     exactly once) fails the run: a mutant list cannot rot silently when
//     the code it targets changes.
//   - A mutant is killed only when one of the tests it names reports
//     "--- FAIL". A mutant that does not compile, or a test binary that
//     fails for another reason, fails the run instead of counting as a kill.
//   - [Run] skips unless CHECKFU_MUTANTS=1, because it compiles the package
//     once per mutant; CI sets it in a step of its own.
package mutation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// An Edit replaces the only occurrence of Old with New.
type Edit struct {
	Old, New string
}

// A Mutant is one deliberate break of a security check.
type Mutant struct {
	// Name says which check the mutant breaks.
	Name string
	// File is the file the edits apply to, relative to the package
	// directory of the test that calls [Run].
	File string
	// Edits are applied in order; each Old must occur exactly once.
	Edits []Edit
	// Kills is a regular expression matching the names of top-level
	// tests of the calling package; at least one of them must fail.
	Kills string
}

// Enabled reports whether mutants run in this process (CHECKFU_MUTANTS=1).
func Enabled() bool { return os.Getenv("CHECKFU_MUTANTS") == "1" }

// Run builds the calling package's tests once per mutant, with the mutant
// applied, and fails t for each mutant that no named test kills. Mutants
// run as parallel subtests named after them.
//
// Without CHECKFU_MUTANTS=1 it builds nothing, but still checks that
// every mutant is complete, uniquely named and applies to its file as it
// is now, so that a check reworded without its mutant fails the ordinary
// test run rather than the mutation step.
func Run(t *testing.T, mutants []Mutant) {
	t.Helper()
	if len(mutants) == 0 {
		t.Fatal("mutation: no mutants listed")
	}
	names := map[string]bool{}
	for _, m := range mutants {
		if m.Name == "" || m.File == "" || len(m.Edits) == 0 || m.Kills == "" {
			t.Fatalf("mutation: mutant %q is incomplete", m.Name)
		}
		if names[m.Name] {
			t.Fatalf("mutation: two mutants are named %q", m.Name)
		}
		names[m.Name] = true
		if _, err := apply(m); err != nil {
			t.Errorf("mutation: mutant %q: %v", m.Name, err)
		}
	}
	if t.Failed() {
		return
	}
	if !Enabled() {
		s, err := planSchemata(mutants, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, why := range s.alone {
			t.Logf("mutant %q will be built alone: %s", name, why)
		}
		t.Skipf("set CHECKFU_MUTANTS=1 to run the mutants (CI does); %d of %d share one build", len(s.id), len(mutants))
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("mutation: no go command on PATH")
	}
	flags := testFlags(t, goBin)
	held := buildSchemata(t, goBin, flags, mutants)
	for _, m := range mutants {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			if held != nil && held.kills(t, flags, m) {
				return
			}
			runOne(t, goBin, flags, m)
		})
	}
}

var (
	flagsOnce sync.Once
	flagsVal  []string
	flagsErr  error
)

// testFlags returns the flags every mutant's test binary gets: rapid's,
// when the package's tests link rapid, so that a mutant never writes a
// failure file into the working tree.
func testFlags(t *testing.T, goBin string) []string {
	t.Helper()
	flagsOnce.Do(func() {
		out, err := exec.Command(goBin, "list", "-test", "-deps", "-f", "{{.ImportPath}}", ".").Output()
		if err != nil {
			flagsErr = err
			return
		}
		for _, p := range strings.Fields(string(out)) {
			if p == "pgregory.net/rapid" {
				flagsVal = []string{"-rapid.nofailfile", "-rapid.checks=1000"}
			}
		}
	})
	if flagsErr != nil {
		t.Fatalf("mutation: go list: %v", flagsErr)
	}
	return flagsVal
}

// apply returns m.File's text with m's edits applied in order, or an
// error when the file cannot be read or an Old does not occur exactly
// once.
func apply(m Mutant) (string, error) {
	src, err := os.ReadFile(m.File)
	if err != nil {
		return "", err
	}
	text := string(src)
	for _, e := range m.Edits {
		if n := strings.Count(text, e.Old); n != 1 {
			return "", fmt.Errorf("%s: %q occurs %d times, want 1 (update the mutant)", m.File, e.Old, n)
		}
		text = strings.Replace(text, e.Old, e.New, 1)
	}
	return text, nil
}

func runOne(t *testing.T, goBin string, flags []string, m Mutant) {
	text, err := apply(m)
	if err != nil {
		t.Fatalf("mutation: %v", err)
	}
	dir := t.TempDir()
	mutated := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(mutated, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(m.File)
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	// -vet=off: vet runs once over the module in CI; run per mutant it
	// re-vetted each mutated package and cost about a third of the step.
	args := []string{"test", "-count=1", "-timeout=5m", "-vet=off", "-overlay", overlayFile, "-run", "^(" + m.Kills + ")$", "."}
	if len(flags) > 0 {
		args = append(append(args, "-args"), flags...)
	}
	cmd := exec.Command(goBin, args...)
	// OverlayEnv carries the overlay to a binary the test builds itself
	// (internal/clitest), so that the real CLI is mutated too.
	cmd.Env = append(os.Environ(), "CHECKFU_MUTANTS=0", OverlayEnv+"="+overlayFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if err == nil {
		t.Fatalf("mutant survived (%v): %s still passes with %q broken\n%s", took, m.Kills, m.Name, out.Bytes())
	}
	if !Killed(out.Bytes(), m.Kills) {
		t.Fatalf("mutant %q did not fail a test named %s (a build error, or a failure elsewhere?):\n%s", m.Name, m.Kills, out.Bytes())
	}
	t.Logf("killed in %v by %s", took, m.Kills)
}

// OverlayEnv names the environment variable that holds, in a mutant's
// test process, the path of its go build overlay; a test that builds a
// binary of the module passes it to go build as -overlay.
const OverlayEnv = "CHECKFU_MUTATION_OVERLAY"

// Killed reports whether go test output shows a top-level test matching
// kills failing.
func Killed(out []byte, kills string) bool {
	return regexp.MustCompile(`(?m)^--- FAIL: (` + kills + `) \(`).Match(out)
}
