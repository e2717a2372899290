//go:build linux

package jail_test

import (
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
)

// suiteStepTimeout bounds each blocking step of the suite on the jail,
// where each takes milliseconds. A mutant under which every step waits
// its bound (a Kill that does not kill: "Kill asks politely") must fail
// well within the mutation harness's 5 min go test timeout: a test
// process killed by that timeout runs no cleanup, and leaves its
// instances' workspaces mounted until the next provider's probe. With
// the suite's default of 30 s it took 5 min 24 s, with 10 s 2 min 33 s.
const suiteStepTimeout = 10 * time.Second

func TestAdaptertest(t *testing.T) {
	p := newProvider(t, jail.Config{})
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return p },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := p.Spec(id, testDigest)
			s.NetworkMode = mode
			return s
		},
		Shell:   []string{"/bin/sh", "-c"},
		Probe:   []string{probePath, adaptertest.ProbeArg},
		Timeout: suiteStepTimeout,
	})
}

// TestAdaptertestAllowlist runs the suite with the allowlist mode
// offered (and first, so most subtests run in it): every process's jail
// has the relay to an instance guard of its own.
func TestAdaptertestAllowlist(t *testing.T) {
	p := newProvider(t, jail.Config{Guard: jail.LocalGuard(jail.GuardOptions{})})
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return p },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := p.Spec(id, testDigest)
			s.NetworkMode = mode
			if mode == "allowlist" {
				s.AllowedHosts = []egress.HostPort{{Host: "example.com", Port: 443}}
			}
			return s
		},
		Shell:   []string{"/bin/sh", "-c"},
		Probe:   []string{probePath, adaptertest.ProbeArg},
		Timeout: suiteStepTimeout,
	})
}
