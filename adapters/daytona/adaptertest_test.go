package daytona_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/daytona"
)

// TestAdaptertest runs the contract's suite against the daytona adapter
// over its spec-validating fake (mock evidence). The adapter declares
// what a session lacks ([daytona.Gaps]: stdin without EOF, line-framed
// text streams); the suite adapts or skips exactly those parts, tries
// everything else, and its DeclaredGaps subtest checks the declaration.
// Wire skips (in-process).
func TestAdaptertest(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.TestProvider(t, adaptertest.Harness{
		New: func(tb testing.TB) adapters.Provider {
			c, _, _ := newClient(tb)
			return &daytona.Provider{Client: c}
		},
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			return adapters.InstanceSpec{ID: id, RootImage: "daytona-small", Platform: "linux/amd64", ProfileDigest: "sha256:profile", NetworkMode: mode}
		},
		Shell:   []string{"/bin/sh", "-c"},
		Probe:   []string{exe, adaptertest.ProbeArg},
		Timeout: 10 * time.Second,
	})
}

// TestNoACPAgent: the declared gaps keep an ACP agent off this
// provider, typed.
func TestNoACPAgent(t *testing.T) {
	d := (&daytona.Provider{}).Describe()
	if d.Gaps != daytona.Gaps() || d.Gaps == (adapters.Gaps{}) {
		t.Fatalf("Describe().Gaps = %+v, want %+v", d.Gaps, daytona.Gaps())
	}
	if err := adapters.Check(d); err != nil {
		t.Errorf("Check = %v", err)
	}
	if err := adapters.CheckACP(d); !errors.Is(err, adapters.CodeStdioInsufficient) {
		t.Errorf("CheckACP = %v, want %s", err, adapters.CodeStdioInsufficient)
	}
}
