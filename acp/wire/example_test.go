package wire_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"

	"github.com/checkfu/checkfu/acp/wire"
)

// A provider serves one process on a listener; a Runner dials it, feeds
// stdin within the granted credit and receives stdout exactly once. Over
// TCP each side holds its own Ed25519 key and pins the other's.
func Example() {
	providerPriv, providerPub, _ := wire.GenerateKey(nil)
	runnerPriv, runnerPub, _ := wire.GenerateKey(nil)
	providerKeys, _ := wire.NewKeys(providerPriv, runnerPub)
	runnerKeys, _ := wire.NewKeys(runnerPriv, providerPub)

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &wire.Server{Command: func() *exec.Cmd { return exec.Command("tr", "a-z", "A-Z") }, Keys: providerKeys}
	go srv.Serve(ln)
	defer srv.Close()

	r := &wire.Runner{
		Keys: runnerKeys,
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", ln.Addr().String())
		},
		Stdin:  strings.NewReader("hello over the wire\n"),
		Stdout: os.Stdout,
	}
	status, err := r.Run(context.Background())
	fmt.Println(status, err)
	// Output:
	// HELLO OVER THE WIRE
	// 0 <nil>
}

// Server.Serve runs the instance's process for the first open; a second
// open while it lives is refused with process_already_open. Over a Unix
// socket (created 0600 by Listen) the peer is authenticated by its uid.
func ExampleServer() {
	dir, _ := os.MkdirTemp("", "wire")
	defer os.RemoveAll(dir)
	ln, _ := wire.Listen("unix", dir+"/wire.sock")
	srv := &wire.Server{
		Command:      func() *exec.Cmd { return exec.Command("sh", "-c", "echo out; echo err >&2; exit 3") },
		OutputWindow: 1 << 20, // output_window_bytes
		InputCredit:  64 << 10,
	}
	go srv.Serve(ln)
	defer srv.Close()

	var stdout, stderr bytes.Buffer
	r := &wire.Runner{
		Dial:   func(ctx context.Context) (net.Conn, error) { return net.Dial("unix", dir+"/wire.sock") },
		Stdout: &stdout,
		Stderr: &stderr,
	}
	status, err := r.Run(context.Background())
	fmt.Printf("status %d, err %v, stdout %q, stderr %q\n", status, err, stdout.String(), stderr.String())
	// Output: status 3, err <nil>, stdout "out\n", stderr "err\n"
}

// Runner.Run returns the exit status; a refusal is a *checkfu.Refusal
// whose code callers branch on with errors.Is.
func ExampleRunner() {
	r := &wire.Runner{
		InsecureNoAuth: true, // an in-memory pipe to a fake provider
		Dial: func(ctx context.Context) (net.Conn, error) {
			// A provider that refuses everything: it reads the open
			// frame (5 header bytes and an 18-byte payload) and answers
			// with one refuse frame, in the format docs/wire.md lays out.
			a, b := net.Pipe()
			go func() {
				io.ReadFull(b, make([]byte, 5+18))
				code, msg := wire.CodeProcessAlreadyOpen, "busy"
				reply := []byte{4, 0, 0, 0, byte(8 + 1 + len(code) + len(msg)), 0, 0, 0, 0, 0, 0, 0, 0, byte(len(code))}
				b.Write(append(append(reply, code...), msg...))
				b.Close()
			}()
			return a, nil
		},
	}
	_, err := r.Run(context.Background())
	fmt.Println(err)
	// Output: refused: process_already_open: wire: the provider says "busy"
}
