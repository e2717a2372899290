package wiretest_test

import (
	"net"
	"os/exec"
	"testing"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/acp/wire/wiretest"
)

func makeServer(t *testing.T) (func() (net.Conn, error), func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &wire.Server{Command: func() *exec.Cmd { return exec.Command("cat") }, InputCredit: wire.MinWindow}
	go srv.Serve(ln)
	return func() (net.Conn, error) { return net.Dial("tcp", ln.Addr().String()) }, func() { srv.Close() }
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
