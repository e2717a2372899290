package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// wrappedConn hides a connection's concrete type, as a caller's Dial that
// wraps its connections (metrics, tracing, a proxy) does.
type wrappedConn struct{ net.Conn }

// A Dial that returns a wrapped Unix-socket connection is not a Unix
// socket the Runner can read SO_PEERCRED from: without Keys it is
// refused config_invalid (it once reached the handshake with a nil
// connection and panicked).
func TestRunnerWithoutKeysRefusesAWrappedUnixConn(t *testing.T) {
	path := t.TempDir() + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Command: command("cat")}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r := &Runner{
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			return wrappedConn{c}, err
		},
		Stdin: strings.NewReader("x\n"),
	}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Run over a wrapped Unix conn without Keys = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}
