// Package alloctest runs a test that measures allocation alone, in a
// child process of the test binary.
//
// runtime.MemStats.TotalAlloc (and every other allocation counter the
// runtime offers, testing.AllocsPerRun's included) counts the whole
// process: a test that bounds the bytes an operation allocates by
// reading it before and after also counts whatever any other test
// allocates meanwhile, and another test running in parallel (t.Parallel)
// makes it fail for no fault of the code. Alone re-runs the calling test
// as the only test of a child process of the same binary, so the
// measurement sees the operation and the test's own work alone, with the
// bound unchanged. The child is the same binary, so a mutant built into
// it is measured too.
package alloctest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// envAlone names, in the child, the test it runs alone.
const envAlone = "CHECKFU_ALLOCTEST_ALONE"

// Alone reports whether the calling test, a top-level test, is running
// alone in the child process: it then measures, and the child's result
// is the test's. In the test binary's own run, Alone runs the test again
// in a child (the same binary, -test.run naming the test alone), fails t
// with the child's output when it fails, skips t when it skips, and
// returns false: the test returns at once.
func Alone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envAlone) == t.Name() {
		return true
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envAlone+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skipf("skipped alone in a child process:\n%s", out)
	case err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("run alone in a child process of the test binary: %v\n%s", err, out)
	}
	return false
}
