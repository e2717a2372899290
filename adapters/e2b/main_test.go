package e2b_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/adapters/adaptertest"
)

func TestMain(m *testing.M) {
	netnsMain()
	adaptertest.ProbeMain()
	os.Exit(m.Run())
}
