//go:build linux

package jail

import (
	"os"
	"sync/atomic"
)

// InitProgramTestEnv names the environment variable that, in this
// package's tests, holds the path of the checkfu-jail-init program the
// tests' providers start their jails with; unset, they re-execute the
// test binary. TestMain sets it for its second pass.
const InitProgramTestEnv = "CHECKFU_JAIL_TEST_INIT_PROGRAM"

// MadeProvider records that a test asked for a provider of the
// parameterised init stage: TestMain runs its second pass only then.
var MadeProvider atomic.Bool

// testConfig is cfg with the init stage of this pass of the tests.
func testConfig(cfg Config) Config {
	MadeProvider.Store(true)
	if cfg.InitProgram == "" {
		cfg.InitProgram = os.Getenv(InitProgramTestEnv)
	}
	return cfg
}

// ConfigForTest is testConfig, for the external tests.
var ConfigForTest = testConfig
