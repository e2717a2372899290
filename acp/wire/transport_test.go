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

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
	"github.com/checkfu/checkfu/internal/cutproxy"
)

var checkfuCode = checkfu.CodeOf

// startServer serves srv on a loopback listener and returns its address.
func startServer(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Keys == nil && !srv.InsecureNoAuth {
		srv.Keys = providerKeys
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
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdout: &out}
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
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdout: &out, Stderr: &errb}
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
	r := &Runner{Keys: runnerKeys, Dial: dialer(proxy.Addr()), Stdin: cuts, Stdout: &out}
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
	first := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: in}
	done := make(chan error, 1)
	go func() { _, err := first.Run(testCtx(t)); done <- err }()
	// Wait until the first Runner holds the process: its stdin is read.
	inW.Write([]byte("x"))
	second := &Runner{Keys: runnerKeys, Dial: dialer(addr)}
	_, err := second.Run(testCtx(t))
	if !errors.Is(err, CodeProcessAlreadyOpen) {
		t.Fatalf("second open: %v, want %s", err, CodeProcessAlreadyOpen)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("first Run: %v", err)
	}
	// Reaped: the reservation is released, a new open succeeds.
	third := &Runner{Keys: runnerKeys, Dial: dialer(addr)}
	if _, err := third.Run(testCtx(t)); err != nil {
		t.Fatalf("open after reap: %v", err)
	}
}

// Every wait for credit wakes on cancellation: a Runner whose process
// never reads stdin, blocked at its credit limit, returns on cancel.
func TestCreditWaitWakesOnCancel(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sleep", "600"), InputCredit: MinWindow})
	ctx, cancel := context.WithCancel(testCtx(t))
	full := make(chan struct{})
	in := &signalAfter{n: MinWindow, ch: full}
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: in}
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	<-full // the whole credit has been taken: the pump now waits for a grant
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v, want context.Canceled", err)
	}
}

// signalAfter is an endless stdin that closes ch once n bytes were read.
type signalAfter struct {
	n, read int
	ch      chan struct{}
}

func (s *signalAfter) Read(p []byte) (int, error) {
	clear(p)
	before := s.read
	s.read += len(p)
	if before < s.n && s.read >= s.n {
		close(s.ch)
	}
	return len(p), nil
}

// The credit wait wakes on process exit: endless stdin into a process
// that exits without reading it.
func TestCreditWaitWakesOnExit(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sh", "-c", "exit 4"), InputCredit: MinWindow})
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: &signalAfter{ch: make(chan struct{})}}
	status, err := r.Run(testCtx(t))
	if err != nil || status != 4 {
		t.Fatalf("Run() = %d, %v; want 4, nil", status, err)
	}
}

func TestRunOverUnixSocket(t *testing.T) {
	path := t.TempDir() + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	srv := &Server{Command: command("cat")}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var out bytes.Buffer
	r := &Runner{
		Dial:   func(ctx context.Context) (net.Conn, error) { var d net.Dialer; return d.DialContext(ctx, "unix", path) },
		Stdin:  strings.NewReader("over a unix socket\n"),
		Stdout: &out,
	}
	if status, err := r.Run(testCtx(t)); err != nil || status != 0 || out.String() != "over a unix socket\n" {
		t.Fatalf("Run() = %d, %v, stdout %q", status, err, out.String())
	}
}

// A provider that lazily replays its whole journal on every resume, with
// cuts mid-stream: the Runner's sequence filter still delivers exactly
// once.
func TestLazyReplayThroughCuts(t *testing.T) {
	srv := &Server{Command: command("seq", "1", "300000"), OutputWindow: 256 << 10, lazyReplay: true}
	proxy, err := cutproxy.New(startServer(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	// A cut is armed every 100 KiB of stdout, about twenty over the
	// stream: on a loaded machine the Runner's stdout can trail what the
	// proxy has forwarded by most of the stream, and an arm after the
	// last byte forwarded never lands.
	w := &cutWriter{proxy: proxy, every: 100 << 10}
	r := &Runner{Keys: runnerKeys, Dial: dialer(proxy.Addr()), Stdout: w}
	if status, err := r.Run(testCtx(t)); err != nil || status != 0 {
		t.Fatalf("Run() = %d, %v", status, err)
	}
	if !bytes.Equal(w.buf.Bytes(), seqOutput(300000)) {
		t.Fatalf("stdout (%d bytes) differs from seq 1 300000", w.buf.Len())
	}
	if proxy.Cuts() < 3 {
		t.Errorf("only %d cuts landed", proxy.Cuts())
	}
}

// cutWriter collects stdout and arms a cut every `every` bytes.
type cutWriter struct {
	buf   bytes.Buffer
	proxy *cutproxy.Proxy
	every int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	before := c.buf.Len() / c.every
	c.buf.Write(p)
	if c.buf.Len()/c.every != before {
		c.proxy.CutAfter(int64(1 + c.buf.Len()%3000))
	}
	return len(p), nil
}

func TestServerConfigRefused(t *testing.T) {
	for _, srv := range []*Server{{}, {Command: command("true"), OutputWindow: 1}, {Command: command("true"), InputCredit: MaxWindow + 1}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Serve(ln); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("Serve with %+v = %v, want %s", srv, err, checkfu.CodeConfigInvalid)
		}
		ln.Close()
	}
	if _, err := (&Runner{}).Run(context.Background()); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("Run without Dial = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

func TestResumeUnknownProcess(t *testing.T) {
	addr := startServer(t, &Server{Command: command("true")})
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, _ := frame.Append(nil, &frame.Frame{Type: frame.TypeResume, ID: frame.ProcessID{42}})
	c.Write(b)
	var f frame.Frame
	if err := frame.NewDecoder(c).Decode(&f); err != nil || f.Type != frame.TypeRefuse || f.Code != CodeProcessUnknown {
		t.Fatalf("resume of an unknown process: %+v, %v; want refuse %s", f, err, CodeProcessUnknown)
	}
}

// Cancelling a Runner terminates the remote process (a kill frame), and
// the Server reports it done.
func TestCancelKillsProcess(t *testing.T) {
	srv := &Server{Command: command("sleep", "600"), InputCredit: MinWindow}
	addr := startServer(t, srv)
	ctx, cancel := context.WithCancel(testCtx(t))
	full := make(chan struct{})
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: &signalAfter{n: MinWindow, ch: full}}
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	<-full
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v", err)
	}
	select {
	case <-srv.Done():
	case <-testCtx(t).Done():
		t.Fatal("the killed process was never reaped")
	}
}

// Close kills the whole process tree, so a descendant holding the pipes
// cannot keep the Server (or "checkfu process serve") alive.
func TestCloseKillsProcessTree(t *testing.T) {
	srv := &Server{Command: command("sh", "-c", "sleep 600 & sleep 600; echo never")}
	addr := startServer(t, srv)
	in, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: in}
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	inW.Write([]byte("x")) // attached: the process runs
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-testCtx(t).Done():
		t.Fatal("Close hung on a process tree")
	}
	cancel()
	<-done
}

// A stderr flood is bounded (dropped and counted, see
// TestStderrBoundedWithDropCounter) and never holds up stdout or the exit.
func TestStderrFloodDoesNotBlockStdout(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sh", "-c", "head -c 4000000 /dev/zero >&2; echo done")})
	var out bytes.Buffer
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdout: &out, Stderr: io.Discard}
	status, err := r.Run(testCtx(t))
	if err != nil || status != 0 || out.String() != "done\n" {
		t.Fatalf("Run() = %d, %v, stdout %q", status, err, out.String())
	}
	t.Logf("stderr dropped: %d of 4000000 bytes", r.StderrDropped())
}

// A failing Stdout ends Run with its error: reconnecting would skip the
// bytes that could not be written.
func TestStdoutWriteErrorIsFinal(t *testing.T) {
	addr := startServer(t, &Server{Command: command("seq", "1", "1000")})
	boom := errors.New("disk full")
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdout: failingWriter{boom}}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, boom) {
		t.Fatalf("Run() error = %v, want %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// After a reap the reservation is released, but the reaped process's
// output stays resumable by its own Runner even if another open started a
// new process meanwhile.
func TestReapedProcessResumableAfterNewOpen(t *testing.T) {
	addr := startServer(t, &Server{Command: command("echo", "first")})
	id := frame.ProcessID{1}
	hello := func(f *frame.Frame) (net.Conn, *frame.Decoder) {
		c, err := dialRaw(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		b, _ := frame.Append(nil, f)
		c.Write(b)
		return c, frame.NewDecoder(c)
	}
	// Open and read until exit, without acknowledging or saying done.
	c, dec := hello(&frame.Frame{Type: frame.TypeOpen, ID: id, Version: frame.ProtocolVersion})
	for f := (frame.Frame{}); f.Type != frame.TypeExit; {
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	// Another Runner opens a new process: allowed, the first was reaped.
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr)}
	if _, err := r.Run(testCtx(t)); err != nil {
		t.Fatalf("open after reap: %v", err)
	}
	// The first Runner resumes from 0 and still gets its output.
	_, dec = hello(&frame.Frame{Type: frame.TypeResume, ID: id, Offset: 0})
	var out []byte
	for f := (frame.Frame{}); f.Type != frame.TypeOutEnd; {
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		if f.Type == frame.TypeRefuse {
			t.Fatalf("resume refused: %s", f.Code)
		}
		if f.Type == frame.TypeStdout {
			out = append(out, f.Data...)
		}
	}
	if string(out) != "first\n" {
		t.Fatalf("resumed output %q, want %q", out, "first\n")
	}
}

// A Runner that cannot reach its provider gives up after ReconnectWithin
// with a DisconnectedError (a failure, not a refusal).
func TestRunnerGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), ReconnectWithin: 50 * time.Millisecond}
	_, err = r.Run(testCtx(t))
	var de *DisconnectedError
	if !errors.As(err, &de) {
		t.Fatalf("Run() error = %v, want *DisconnectedError", err)
	}
	if _, isRefusal := checkfuCode(err); isRefusal {
		t.Fatalf("giving up is reported as a refusal: %v", err)
	}
}
