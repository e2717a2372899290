package process_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/process"
)

func TestMain(m *testing.M) {
	adaptertest.ProbeMain()
	os.Exit(m.Run())
}

// harness is how adaptertest drives the process provider.
func harness(t testing.TB) adaptertest.Harness {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return process.New() },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := process.Spec(id, "sha256:0000000000000000000000000000000000000000000000000000000000000000")
			s.NetworkMode = mode
			return s
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{exe, adaptertest.ProbeArg},
	}
}

func TestAdaptertest(t *testing.T) {
	adaptertest.TestProvider(t, harness(t))
}

// TestAdaptertestRemote runs the suite against the process provider
// behind acp/wire, which exercises the suite's Wire subtests.
func TestAdaptertestRemote(t *testing.T) {
	h := harness(t)
	h.New = func(testing.TB) adapters.Provider { return process.Remote{} }
	adaptertest.TestProvider(t, h)
}
