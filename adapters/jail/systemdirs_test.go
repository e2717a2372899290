package jail_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/internal/copytest"
)

// TestDefaultSystemDirsIsACopy: the directories DefaultSystemDirs
// returns are the caller's own; writing over them leaves the next call's
// answer, and so what a jail with no SystemDirs mounts, unchanged.
func TestDefaultSystemDirsIsACopy(t *testing.T) {
	copytest.Fresh(t, "DefaultSystemDirs", jail.DefaultSystemDirs, "/root")
}
