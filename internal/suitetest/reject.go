package suitetest

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// Rejects runs suite under a Recorder named name and fails t unless the
// suite failed: name is a broken implementation the suite must reject.
// It logs the suite's first error, so the reason stays visible with -v.
func Rejects(t *testing.T, name string, suite func(r *Recorder)) {
	t.Helper()
	res := Record(t, name, suite)
	switch {
	case res.Failed:
		t.Logf("%s rejected by %v: %s", name, failing(name, res.Errors), first(res.Errors))
	case res.Skipped:
		t.Errorf("the suite skipped the broken implementation %s instead of rejecting it", name)
	default:
		t.Errorf("the suite accepted the broken implementation %s", name)
	}
}

// Accepts runs suite under a Recorder and fails t, with the suite's
// errors, if the suite failed: it is the control that shows the suite
// passes a correct implementation when run the same way.
func Accepts(t *testing.T, name string, suite func(r *Recorder)) {
	t.Helper()
	if res := Record(t, name, suite); res.Failed {
		t.Errorf("the suite rejected the correct implementation %s:\n%s", name, res)
	}
}

// failing returns the subtests, one level below name, that reported an
// error, in order of first report.
func failing(name string, errs []string) []string {
	var out []string
	for _, e := range errs {
		sub, _, _ := strings.Cut(strings.TrimPrefix(e, name+"/"), ":")
		sub, _, _ = strings.Cut(sub, "/")
		if !slices.Contains(out, sub) {
			out = append(out, sub)
		}
	}
	return out
}

func first(errs []string) string {
	if len(errs) == 0 {
		return "(no message)"
	}
	return errs[0]
}

// QuietRapid sets, for the rest of t, rapid's flags so that a property
// failing on purpose neither writes a fail file into testdata (which a
// later run would replay against the correct implementation) nor shrinks
// for long.
func QuietRapid(t *testing.T) {
	t.Helper()
	for name, value := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "1s"} {
		f := flag.Lookup(name)
		if f == nil {
			continue // rapid is not linked into this test binary
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatalf("set -%s: %v", name, err)
		}
		t.Cleanup(func() { f.Value.Set(old) })
	}
}
