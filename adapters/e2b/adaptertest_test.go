package e2b_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/egress"
)

// TestAdaptertest runs the contract's suite against the E2B adapter
// over its spec-validating fake (mock evidence).
func TestAdaptertest(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(tb testing.TB) adapters.Provider {
			c, _, _ := newClient(tb)
			allow, err := egress.AllowlistNetwork(egress.Allowlist{AllowedHosts: []egress.HostPort{{Host: "api.example.com", Port: 443}}})
			if err != nil {
				tb.Fatal(err)
			}
			policy, err := allow.Compile(nil)
			if err != nil {
				tb.Fatal(err)
			}
			return &e2b.Provider{Client: c, Allowlist: policy}
		},
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			return adapters.InstanceSpec{ID: id, RootImage: "base", Platform: "linux/amd64", ProfileDigest: "sha256:profile", NetworkMode: mode}
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{exe, adaptertest.ProbeArg},
	})
}
