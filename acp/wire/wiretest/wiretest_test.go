package wiretest_test

import (
	"net"
	"os/exec"
	"testing"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/acp/wire/wiretest"
)

// makeServer serves on a Unix socket, whose peer the Server authenticates
// by uid: the suite's raw frames then reach it without TLS.
func makeServer(t *testing.T) (func() (net.Conn, error), func()) {
	path := t.TempDir() + "/wire.sock"
	ln, err := wire.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &wire.Server{Command: func() *exec.Cmd { return exec.Command("cat") }, InputCredit: wire.MinWindow}
	go srv.Serve(ln)
	return func() (net.Conn, error) { return net.Dial("unix", path) }, func() { srv.Close() }
}

func TestServerConforms(t *testing.T) {
	wiretest.TestProvider(t, makeServer)
}

// A provider is checked by handing the suite a factory.
func ExampleTestProvider() {
	// In a test function:
	//	wiretest.TestProvider(t, func(t *testing.T) (func() (net.Conn, error), func()) {
	//		... start a provider running "cat"; return its dialer and a stop function
	//	})
}
