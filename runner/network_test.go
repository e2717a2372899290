package runner_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/runner"
)

// errRecorded is what specRecorder's Create answers once it has kept
// the spec: the test needs no instance.
var errRecorded = errors.New("spec recorded")

// specRecorder is package process's provider declaring the allowlist
// mode (graded advisory_filter, as the jail with a guard is), whose
// Create records the spec it is asked for and makes no instance.
type specRecorder struct {
	process.Provider
	got *[]adapters.InstanceSpec
}

func (p specRecorder) Describe() adapters.Description {
	d := p.Provider.Describe()
	d.Capability.NetworkModes = append(slices.Clone(d.Capability.NetworkModes), "allowlist")
	slices.Sort(d.Capability.NetworkModes)
	d.Capability.EgressCertification = checkfu.AdvisoryFilter
	return d
}

// Spec is process's default spec with a host of its own, which no
// admitted profile names: it must never reach an instance.
func (specRecorder) Spec(id, digest string) adapters.InstanceSpec {
	s := process.Spec(id, digest)
	s.AllowedHosts = []egress.HostPort{{Host: "default.example.com", Port: 443}}
	return s
}

func (p specRecorder) Create(_ context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	*p.got = append(*p.got, spec)
	return nil, errRecorded
}

// TestInstanceSpecCarriesTheAdmittedNetworkPolicy: the spec of the
// instance Launch asks for carries the admitted profile's network
// policy, its member as NetworkMode and an allowlist's exact hosts as
// AllowedHosts (with the default port), not the provider's default
// spec; an unrestricted profile's spec names no host.
func TestInstanceSpecCarriesTheAdmittedNetworkPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy string
		mode   string
		hosts  []egress.HostPort
	}{
		{`{"type": "allowlist", "allowed_hosts": ["api.example.com", "files.example.com:8443"]}`, "allowlist",
			[]egress.HostPort{{Host: "api.example.com", Port: 443}, {Host: "files.example.com", Port: 8443}}},
		{`{"type": "unrestricted"}`, "unrestricted", nil},
	} {
		var got []adapters.InstanceSpec
		g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = specRecorder{got: &got} })
		s := g.session(t)
		ctx := context.Background()
		v, err := s.Publish(ctx, profileDoc(tc.policy), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Admit(ctx, v, laneTrusted, provenance); err != nil {
			t.Fatalf("%s: Admit = %v", tc.mode, err)
		}
		if _, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, nil)}); !errors.Is(err, errRecorded) {
			t.Fatalf("%s: Launch = %v, want the recorder's refusal", tc.mode, err)
		}
		if len(got) != 1 {
			t.Fatalf("%s: %d instances asked for, want 1", tc.mode, len(got))
		}
		if got[0].NetworkMode != tc.mode || !slices.Equal(got[0].AllowedHosts, tc.hosts) {
			t.Errorf("%s: the instance spec has mode %q hosts %v, want %q %v", tc.mode, got[0].NetworkMode, got[0].AllowedHosts, tc.mode, tc.hosts)
		}
	}
}
