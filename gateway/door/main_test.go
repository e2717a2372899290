package door_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/internal/clitest"
)

// TestMain runs the test binary as the scripted agent when asked (see
// agentMain), and otherwise the tests, removing the door binary the
// end-to-end test builds.
func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		os.Exit(agentMain())
	}
	os.Exit(clitest.Run(m))
}
