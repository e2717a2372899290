package wire

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/internal/cutproxy"
)

// startServer serves srv on a loopback listener and returns its address.
func startServer(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func dialer(addr string) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

func command(name string, args ...string) func() *exec.Cmd {
	return func() *exec.Cmd { return exec.Command(name, args...) }
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestRunSeq(t *testing.T) {
	addr := startServer(t, &Server{Command: command("seq", "1", "100000")})
	var out bytes.Buffer
	r := &Runner{Dial: dialer(addr), Stdout: &out}
	status, err := r.Run(testCtx(t))
	if err != nil || status != 0 {
		t.Fatalf("Run() = %d, %v; want 0, nil", status, err)
	}
	if !bytes.Equal(out.Bytes(), seqOutput(100000)) {
		t.Fatalf("stdout differs from seq 1 100000 (%d bytes)", out.Len())
	}
}

func TestRunExitStatusAndStderr(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sh", "-c", "echo out; echo err >&2; exit 7")})
	var out, errb bytes.Buffer
	r := &Runner{Dial: dialer(addr), Stdout: &out, Stderr: &errb}
	status, err := r.Run(testCtx(t))
	if err != nil || status != 7 {
		t.Fatalf("Run() = %d, %v; want 7, nil", status, err)
	}
	if out.String() != "out\n" || errb.String() != "err\n" {
		t.Fatalf("stdout %q stderr %q; want %q %q", out.String(), errb.String(), "out\n", "err\n")
	}
}

// Stdin with cuts: a few MiB through sha256sum while the proxy severs the
// connection repeatedly; the digest must match (applied exactly once).
func TestStdinThroughCuts(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sha256sum"), InputCredit: 64 << 10, OutputWindow: 64 << 10})
	proxy, err := cutproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	input := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range input {
		input[i] = byte(rng.Uint32())
	}
	cuts := &cuttingReader{r: bytes.NewReader(input), proxy: proxy, every: 700 << 10}
	var out bytes.Buffer
	r := &Runner{Dial: dialer(proxy.Addr()), Stdin: cuts, Stdout: &out}
	status, err := r.Run(testCtx(t))
	if err != nil || status != 0 {
		t.Fatalf("Run() = %d, %v", status, err)
	}
	sum := sha256.Sum256(input)
	want := hexString(sum[:]) + "  -\n"
	if out.String() != want {
		t.Fatalf("sha256sum printed %q, want %q", out.String(), want)
	}
	if proxy.Cuts() < 3 {
		t.Errorf("only %d cuts happened", proxy.Cuts())
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

// cuttingReader cuts the proxy every `every` bytes read.
type cuttingReader struct {
	r     io.Reader
	proxy *cutproxy.Proxy
	every int
	n     int
}

func (c *cuttingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	before := c.n / c.every
	c.n += n
	if c.n/c.every != before {
		c.proxy.CutAfter(1 + int64(c.n%5000))
	}
	return n, err
}

func TestSecondOpenRefused(t *testing.T) {
	addr := startServer(t, &Server{Command: command("cat")})
	in, inW := io.Pipe()
	first := &Runner{Dial: dialer(addr), Stdin: in}
	done := make(chan error, 1)
	go func() { _, err := first.Run(testCtx(t)); done <- err }()
	// Wait until the first Runner holds the process: its stdin is read.
	inW.Write([]byte("x"))
	second := &Runner{Dial: dialer(addr)}
	_, err := second.Run(testCtx(t))
	if !errors.Is(err, CodeProcessAlreadyOpen) {
		t.Fatalf("second open: %v, want %s", err, CodeProcessAlreadyOpen)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("first Run: %v", err)
	}
	// Reaped: the reservation is released, a new open succeeds.
	third := &Runner{Dial: dialer(addr)}
	if _, err := third.Run(testCtx(t)); err != nil {
		t.Fatalf("open after reap: %v", err)
	}
}
