//go:build linux

package jail_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
)

// TestSpecEnvLastAssignmentWins: a spec that sets a name the jail sets
// (HOME), or one name twice, runs with one assignment of each, the last,
// as the process provider runs it: the program cannot read another value
// than the one the spec ended with.
func TestSpecEnvLastAssignmentWins(t *testing.T) {
	p := newProvider(t, jail.Config{})
	inst, err := jail.CreateForTest(t, p, p.Spec("env-last", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(t.Context(), adapters.ProcessSpec{
		Argv: []string{"env"},
		Env:  []string{"HOME=/tmp/home", "CHECKFU_TWICE=first", "CHECKFU_TWICE=second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr())
	b, _ := io.ReadAll(proc.Stdout())
	if code, err := proc.Wait(); code != 0 || err != nil {
		t.Fatalf("env in the jail: exit %d, %v", code, err)
	}
	out := string(b)
	var homes, twice []string
	for _, kv := range strings.Split(strings.TrimSpace(out), "\n") {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME":
			homes = append(homes, kv)
		case "CHECKFU_TWICE":
			twice = append(twice, kv)
		}
	}
	if !slices.Equal(homes, []string{"HOME=/tmp/home"}) || !slices.Equal(twice, []string{"CHECKFU_TWICE=second"}) {
		t.Errorf("the jail's environment holds HOME %q and CHECKFU_TWICE %q; want one of each, the spec's last\n%s", homes, twice, out)
	}
}
