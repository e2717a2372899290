package acp_test

import (
	"io"
	"testing"

	"github.com/checkfu/checkfu/acp/acptest"
)

// startFake runs the scripted fake agent on in-memory pipes.
func startFake(t *testing.T) (io.Reader, io.WriteCloser) {
	t.Helper()
	return acptest.Start(t, &acptest.Agent{})
}
