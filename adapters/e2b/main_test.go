package e2b_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

func TestMain(m *testing.M) {
	vendortest.NetnsMain()
	adaptertest.ProbeMain()
	os.Exit(m.Run())
}
