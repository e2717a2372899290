package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/internal/cutproxy"
)

// startServe runs "checkfu process serve" as a real process and returns
// the address it printed.
func startServe(t *testing.T, args ...string) (addr string, wait func() error) {
	t.Helper()
	return startServeAt(t, "127.0.0.1:0", args...)
}

func startServeAt(t *testing.T, listen string, args ...string) (addr string, wait func() error) {
	t.Helper()
	if !strings.HasPrefix(listen, "unix:") && !slices.Contains(args, "-key") && !slices.Contains(args, "-insecure-no-auth") {
		args = append(wireKeyArgs(t, "provider", "runner"), args...)
	}
	cmd := exec.Command(clitest.Binary(t), append([]string{"process", "serve", "-listen", listen}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM lets serve kill its process tree; SIGKILL if it hangs.
		cmd.Process.Signal(syscall.SIGTERM)
		t := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		cmd.Wait()
		t.Stop()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed %q: %v", line, err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("serve printed %q, want \"listening on ADDR\"", line)
	}
	return addr, cmd.Wait
}

// attachCommand returns "checkfu process attach -connect addr" with the
// runner's test keys (over TCP).
func attachCommand(t *testing.T, addr string, args ...string) *exec.Cmd {
	t.Helper()
	if !strings.HasPrefix(addr, "unix:") && len(args) == 0 {
		args = wireKeyArgs(t, "runner", "provider")
	}
	return exec.Command(clitest.Binary(t), append([]string{"process", "attach", "-connect", addr}, args...)...)
}

// wireKeyArgs writes the fixed test keys of side me and the public key of
// side peer to a new directory and returns "-key ME.pem -peer PEER.pub".
// The keys derive from the names, so every test's copies match.
func wireKeyArgs(t *testing.T, me, peer string) []string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, private bool) string {
		seed := sha256.Sum256([]byte(name))
		priv, pub, err := wire.GenerateKey(bytes.NewReader(seed[:]))
		if err != nil {
			t.Fatal(err)
		}
		data, path := pub, filepath.Join(dir, name+".pub")
		if private {
			data, path = priv, filepath.Join(dir, name+".pem")
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return []string{"-key", write(me, true), "-peer", write(peer, false)}
}

// wireKeys returns the wire.Keys of wireKeyArgs(t, me, peer).
func wireKeys(t *testing.T, me, peer string) *wire.Keys {
	t.Helper()
	args := wireKeyArgs(t, me, peer)
	priv, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(args[3])
	if err != nil {
		t.Fatal(err)
	}
	k, err := wire.NewKeys(priv, pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCutProxy(t *testing.T, target string) *cutproxy.Proxy {
	t.Helper()
	p, err := cutproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// The acceptance line: serve/attach stream `seq 1 3000000` byte-identical
// while the connection between them is cut several times.
func TestProcessSeqThroughCuts(t *testing.T) {
	addr, serveWait := startServe(t, "--", "seq", "1", "3000000")
	proxy := newCutProxy(t, addr)
	attach := attachCommand(t, proxy.Addr())
	var stderr bytes.Buffer
	attach.Stderr = &stderr
	out, err := attach.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { attach.Process.Kill() })
	// Once the cut armed last has landed, arm the next, 2 MB and a few KB
	// of the proxy's own traffic later: the cuts are spaced by what the
	// proxy forwards, not by what this reader has read, which lags it by
	// as much as the stream's window, so that five or more land in the
	// middle of the ~21 MB stream however the machine schedules the two.
	const maxCuts = 8
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var n, armed int64
	for {
		m, err := out.Read(buf)
		h.Write(buf[:m])
		n += int64(m)
		if armed < maxCuts && proxy.Cuts() >= armed {
			proxy.CutAfter(2<<20 + n%9000)
			armed++
		}
		if err != nil {
			break
		}
	}
	if err := attach.Wait(); err != nil {
		t.Fatalf("attach: %v (stderr %q)", err, stderr.String())
	}
	want := sha256.Sum256(seqBytes(3000000))
	if got := h.Sum(nil); !bytes.Equal(got, want[:]) || n != int64(len(seqBytes(3000000))) {
		t.Fatalf("attach stdout (%d bytes) differs from seq 1 3000000", n)
	}
	if proxy.Cuts() < 5 {
		t.Errorf("only %d cuts landed, want at least 5", proxy.Cuts())
	}
	t.Logf("%d cuts landed in %d bytes", proxy.Cuts(), n)
	if err := serveWait(); err != nil {
		t.Errorf("serve: %v", err)
	}
}

var seqCache = map[int][]byte{}

func seqBytes(n int) []byte {
	if b, ok := seqCache[n]; ok {
		return b
	}
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	seqCache[n] = b.Bytes()
	return b.Bytes()
}

// Stdin through cuts: a few MiB piped into sha256sum across several cuts
// must hash the same (every byte applied exactly once).
func TestProcessStdinThroughCuts(t *testing.T) {
	addr, _ := startServe(t, "-input-credit", "64KiB", "--", "sha256sum")
	proxy := newCutProxy(t, addr)
	input := make([]byte, 5<<20)
	rng := rand.New(rand.NewPCG(4, 2))
	for i := range input {
		input[i] = byte(rng.Uint32())
	}
	attach := attachCommand(t, proxy.Addr())
	attach.Stdin = &cutEvery{r: bytes.NewReader(input), proxy: proxy, every: 900 << 10}
	var stdout, stderr bytes.Buffer
	attach.Stdout, attach.Stderr = &stdout, &stderr
	if err := attach.Run(); err != nil {
		t.Fatalf("attach: %v (stderr %q)", err, stderr.String())
	}
	sum := sha256.Sum256(input)
	if want := fmt.Sprintf("%x  -\n", sum); stdout.String() != want {
		t.Fatalf("sha256sum via attach = %q, want %q", stdout.String(), want)
	}
	if proxy.Cuts() < 3 {
		t.Errorf("only %d cuts landed, want at least 3", proxy.Cuts())
	}
}

type cutEvery struct {
	r     io.Reader
	proxy *cutproxy.Proxy
	every int
	n     int
}

func (c *cutEvery) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if (c.n+n)/c.every != c.n/c.every {
		c.proxy.CutAfter(1 + int64(c.n%7000))
	}
	c.n += n
	return n, err
}

func TestProcessAttachExitStatus(t *testing.T) {
	addr, _ := startServe(t, "--", "sh", "-c", "echo hi; echo oops >&2; exit 5")
	var stdout, stderr bytes.Buffer
	attach := attachCommand(t, addr)
	attach.Stdout, attach.Stderr = &stdout, &stderr
	err := attach.Run()
	if exitCode(err) != 5 || stdout.String() != "hi\n" || stderr.String() != "oops\n" {
		t.Fatalf("attach: exit %d stdout %q stderr %q; want 5, %q, %q", exitCode(err), stdout.String(), stderr.String(), "hi\n", "oops\n")
	}
}

// A Runner kept away longer than the provider holds its output is refused
// output_truncated: attach exits 3 and names the code.
func TestProcessAttachOutputTruncated(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "finished")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	srv := &wire.Server{
		Command:      func() *exec.Cmd { return exec.Command("sh", "-c", "seq 1 300000; echo > "+fifo) },
		OutputWindow: 64 << 10,
		DetachGrace:  -1, // evict as soon as the Runner is gone
		Keys:         wireKeys(t, "provider", "runner"),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	proxy := newCutProxy(t, ln.Addr().String())

	attach := attachCommand(t, proxy.Addr())
	var stderr bytes.Buffer
	attach.Stderr = &stderr
	out, err := attach.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { attach.Process.Kill() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	proxy.Hold()
	proxy.Cut()
	// The process can finish only by writing all of its output, far more
	// than the window, while attach is held away.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opened := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the process never finished")
	}
	proxy.Release()
	go io.Copy(io.Discard, out)
	err = attach.Wait()
	if exitCode(err) != exitOutputTruncated || !strings.Contains(stderr.String(), "code: output_truncated") {
		t.Fatalf("attach: exit %d stderr %q; want %d and the code", exitCode(err), stderr.String(), exitOutputTruncated)
	}
}

func TestProcessUsage(t *testing.T) {
	tests := [][]string{
		{"process", "serve"},
		{"process", "serve", "-listen", "127.0.0.1:0"},
		{"process", "serve", "-listen", "127.0.0.1:0", "-output-window", "lots", "--", "true"},
		{"process", "attach"},
		{"process", "attach", "-connect", "x", "extra"},
		{"process", "attach", "-connect", "127.0.0.1:1"},
		{"process", "attach", "-connect", "127.0.0.1:1", "-insecure-no-auth", "-key", "k.pem"},
		{"process", "serve", "-listen", "127.0.0.1:0", "--", "true"},
		{"process", "nope"},
	}
	for _, args := range tests {
		if _, stderr, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("checkfu %v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
	if _, stderr, code := runCLI(t, "", "process", "serve", "-listen", "127.0.0.1:0", "-insecure-no-auth", "--", "no-such-command-xyz"); code != exitFailed || !strings.Contains(stderr, "hint:") {
		t.Errorf("serve of a missing command: exit %d stderr %q; want %d with a hint", code, stderr, exitFailed)
	}
	// A window that parses but is out of range is the one serve error
	// whose hint names the window flags.
	if _, stderr, code := runCLI(t, "", "process", "serve", "-listen", "127.0.0.1:0", "-insecure-no-auth", "-output-window", "1K", "--", "true"); code != exitFailed || !strings.Contains(stderr, string(checkfu.CodeConfigInvalid)) || !strings.Contains(stderr, "hint: check -output-window") {
		t.Errorf("serve with a 1K window: exit %d stderr %q; want %d, %s and the window hint", code, stderr, exitFailed, checkfu.CodeConfigInvalid)
	}
	for _, sub := range []string{"serve", "attach"} {
		_, stderr, code := runCLI(t, "", "process", sub, "-h")
		if code != exitOK || !strings.Contains(stderr, "usage: checkfu process "+sub) {
			t.Errorf("checkfu process %s -h: exit %d stderr %q", sub, code, stderr)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true}, {"64K", 64 << 10, true}, {"64KiB", 64 << 10, true}, {"8MiB", 8 << 20, true},
		{"1G", 1 << 30, true}, {"", 0, false}, {"-1", 0, false}, {"1KB", 0, false}, {"MiB", 0, false}, {"9999999G", 0, false},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// serve and attach also speak over a Unix socket (unix:/path).
func TestProcessOverUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "wire.sock")
	addr, _ := startServeAt(t, "unix:"+sock, "--", "tr", "a-z", "A-Z")
	if addr != "unix:"+sock {
		t.Fatalf("serve printed %q, want %q", addr, "unix:"+sock)
	}
	attach := attachCommand(t, addr)
	attach.Stdin = strings.NewReader("unix\n")
	out, err := attach.Output()
	if err != nil || string(out) != "UNIX\n" {
		t.Fatalf("attach over a unix socket: %q, %v", out, err)
	}
}

// The red-team case through the CLI: keys made by "attester keygen", a
// serve that pins the runner's key, and a stranger with another key (or
// none) who attaches first. The stranger fails to open, with the code on
// stderr; the pinned runner then runs the process.
func TestProcessStrangerWhoAttachesFirstFailsToOpen(t *testing.T) {
	dir := t.TempDir()
	pubFile := func(name, pem string) string {
		path := filepath.Join(dir, name+".pub")
		if err := os.WriteFile(path, []byte(pem), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	provKey, provPub := keygen(t, dir, "provider")
	runKey, runPub := keygen(t, dir, "runner")
	strangerKey, _ := keygen(t, dir, "stranger")
	provPubFile, runPubFile := pubFile("provider", provPub), pubFile("runner", runPub)
	addr, _ := startServe(t, "-key", provKey, "-peer", runPubFile, "--", "tr", "a-z", "A-Z")

	stranger := attachCommand(t, addr, "-key", strangerKey, "-peer", provPubFile)
	stranger.Stdin = strings.NewReader("stranger\n")
	var stderr bytes.Buffer
	stranger.Stderr = &stderr
	out, err := stranger.Output()
	if exitCode(err) != exitFailed || len(out) != 0 || !strings.Contains(stderr.String(), string(wire.CodePeerRefused)) {
		t.Fatalf("a stranger's attach: exit %d, stdout %q, stderr %q; want exit %d, nothing, %s", exitCode(err), out, stderr.String(), exitFailed, wire.CodePeerRefused)
	}
	insecure := attachCommand(t, addr, "-insecure-no-auth")
	insecure.Stdin = strings.NewReader("plain\n")
	if out, err := insecure.Output(); err == nil || len(out) != 0 {
		t.Fatalf("an unauthenticated attach got %q, %v; want a failure and nothing", out, err)
	}

	runner := attachCommand(t, addr, "-key", runKey, "-peer", provPubFile)
	runner.Stdin = strings.NewReader("runner\n")
	if out, err := runner.Output(); err != nil || string(out) != "RUNNER\n" {
		t.Fatalf("the pinned runner's attach: %q, %v", out, err)
	}
}
