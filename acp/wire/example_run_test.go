package wire_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
)

// Run returns a *wire.DisconnectedError, not a refusal, when it gives up
// redialling: the process may still be running on the provider.
func ExampleRunner_Run() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more

	r := &wire.Runner{
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
		ReconnectWithin: 50 * time.Millisecond,
	}
	_, err := r.Run(context.Background())
	var lost *wire.DisconnectedError
	fmt.Println(errors.As(err, &lost))
	fmt.Println(errors.Is(err, wire.CodeOutputTruncated)) // not a refusal

	// A Runner without Dial is refused: the zero Runner is not usable.
	_, err = (&wire.Runner{}).Run(context.Background())
	fmt.Println(errors.Is(err, checkfu.CodeConfigInvalid))
	// Output:
	// true
	// false
	// true
}

// ServeConn serves one connection; here one end of an in-memory pipe.
// Done closes once the process has exited and the Runner has collected
// everything.
func ExampleServer_ServeConn() {
	// An in-memory pipe has no peer to authenticate.
	srv := &wire.Server{Command: func() *exec.Cmd { return exec.Command("cat") }, InsecureNoAuth: true}
	defer srv.Close()

	r := &wire.Runner{
		InsecureNoAuth: true,
		Dial: func(ctx context.Context) (net.Conn, error) {
			runnerEnd, providerEnd := net.Pipe()
			go srv.ServeConn(providerEnd)
			return runnerEnd, nil
		},
		Stdin:  strings.NewReader("over a pipe\n"),
		Stdout: os.Stdout,
	}
	status, err := r.Run(context.Background())
	fmt.Println(status, err)
	<-srv.Done()
	fmt.Println("done")
	// Output:
	// over a pipe
	// 0 <nil>
	// done
}
