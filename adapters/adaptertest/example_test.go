package adaptertest_test

import (
	"fmt"
	"io"
	"os"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/process"
)

// An adapter author runs the suite from a test of their own package.
// The probe is the test binary itself: TestMain calls
// adaptertest.ProbeMain first.
func ExampleTestProvider() {
	var t *testing.T // the *testing.T of TestMyProvider(t *testing.T)
	exe, _ := os.Executable()
	h := adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return process.New() },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := process.Spec(id, "sha256:0000000000000000000000000000000000000000000000000000000000000000")
			s.NetworkMode = mode
			return s
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{exe, adaptertest.ProbeArg},
	}
	if t != nil {
		adaptertest.TestProvider(t, h)
	}
}

// RunProbe is what runs inside an instance; here it runs in the test
// process itself.
func ExampleRunProbe() {
	fmt.Println(adaptertest.RunProbe([]string{"selftest"}, io.Discard) == adaptertest.ProbeOK)
	fmt.Println(adaptertest.RunProbe([]string{"dial"}, io.Discard) == adaptertest.ProbeUsage)
	// Output:
	// true
	// true
}

// Break fails exactly one clause of a matching pair, for integrators'
// own properties over evidence.
func ExampleBreak() {
	var t *testing.T // the *testing.T of a property test
	if t == nil {
		return
	}
	rapid.Check(t, func(rt *rapid.T) {
		p := adaptertest.Break(rt, adaptertest.Matching().Draw(rt, "pair"), adapters.ClauseRootImage)
		if m := adapters.MatchEvidence(p.Held, p.Evidence); len(m.Failed) != 1 {
			rt.Fatal(m.Failed)
		}
	})
}
