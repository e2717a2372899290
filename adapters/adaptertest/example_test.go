package adaptertest_test

import (
	"os"
	"testing"

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
