//go:build unix

package main

import (
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
)

// TestAdaptertest runs the conformance suite every adapter passes. The
// scratch provider offers no network mode none, so the suite needs no
// probe (Harness.Probe) and runs none.
func TestAdaptertest(t *testing.T) {
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { return scratch{} },
		// The spec the Runner would ask for: what the provider can apply,
		// in the network mode the suite names.
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			return adapters.InstanceSpec{ID: id, Platform: scratchPlatform, ProfileDigest: exampleProfileDigest, NetworkMode: mode}
		},
		Shell: []string{"/bin/sh", "-c"},
	})
}
