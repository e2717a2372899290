package daytona_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	netnsMain()
	os.Exit(m.Run())
}
