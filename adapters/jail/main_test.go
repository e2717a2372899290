//go:build linux

package jail_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/jail"
)

func TestMain(m *testing.M) {
	jail.InitMain()
	adaptertest.ProbeMain()
	escapeMain()
	parentMain()
	os.Exit(m.Run())
}

// probePath is where the test binary is bound in every jail the tests
// make, so it can act as the probe inside.
const probePath = jail.BindRoot + "/probe"

// newProvider returns a provider whose jails hold the test binary at
// probePath. Without the kernel's support it fails under CI=true and
// skips otherwise, saying what the kernel lacks.
func newProvider(t testing.TB, cfg jail.Config) *jail.Provider {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Binds = append(cfg.Binds, jail.Bind{Source: exe, Target: probePath})
	p, err := jail.New(cfg)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("jail.New: %v (CI must run the jail)", err)
		}
		t.Skipf("jail.New: %v", err)
	}
	return p
}
