//go:build linux

package jail_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
)

func TestAdaptertest(t *testing.T) {
	p := newProvider(t, jail.Config{})
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return p },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := p.Spec(id, testDigest)
			s.NetworkMode = mode
			return s
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{probePath, adaptertest.ProbeArg},
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
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{probePath, adaptertest.ProbeArg},
	})
}
