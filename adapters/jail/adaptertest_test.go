package jail_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/jail"
)

func TestAdaptertest(t *testing.T) {
	p := newProvider(t, jail.Config{})
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return p },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := p.Spec(id, "sha256:"+"ab12"+string(make([]byte, 0)))
			s.ProfileDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
			s.NetworkMode = mode
			return s
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{probePath, adaptertest.ProbeArg},
	})
}
