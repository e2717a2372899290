package acp_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/internal/clitest"
)

// TestMain removes the checkfu binary the real-agent tests build.
func TestMain(m *testing.M) { os.Exit(clitest.Run(m)) }
