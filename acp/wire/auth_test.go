package wire

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
	"github.com/checkfu/checkfu/internal/cutproxy"
)

// Fixed test keys: the provider pins the Runner's key and the Runner the
// provider's; the stranger's key is pinned by nobody.
var (
	providerKeyPEM, providerPubPEM = testKey(1)
	runnerKeyPEM, runnerPubPEM     = testKey(2)
	strangerKeyPEM, _              = testKey(3)
	providerKeys                   = mustKeys(providerKeyPEM, runnerPubPEM)
	runnerKeys                     = mustKeys(runnerKeyPEM, providerPubPEM)
	strangerKeys                   = mustKeys(strangerKeyPEM, providerPubPEM)
)

func testKey(seed byte) (priv, pub []byte) {
	priv, pub, err := GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)))
	if err != nil {
		panic(err)
	}
	return priv, pub
}

func mustKeys(priv []byte, peers ...[]byte) *Keys {
	k, err := NewKeys(priv, peers...)
	if err != nil {
		panic(err)
	}
	return k
}

// countingCommand returns a Command that counts how often it ran.
func countingCommand(n *atomic.Int32, name string, args ...string) func() *exec.Cmd {
	return func() *exec.Cmd { n.Add(1); return exec.Command(name, args...) }
}

// The red-team case: a local stranger reaches the listener while no
// process is live and opens first. Over TCP the provider now demands a
// pinned key in a TLS 1.3 handshake, so neither a plain open frame nor a
// TLS peer holding an unpinned key starts a process, reads stdout or
// writes stdin; the real Runner then opens normally.
func TestStrangerWhoOpensFirstFailsToOpen(t *testing.T) {
	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat"), Keys: providerKeys})

	// A plain-TCP stranger sends an open frame.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	open, _ := frame.Append(nil, &frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: frame.ProcessID{7}})
	c.Write(open)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var f frame.Frame
	if err := frame.NewDecoder(c).Decode(&f); err == nil {
		t.Fatalf("a plain-TCP stranger's open got a %v frame back", f.Type)
	}
	c.Close()

	// A TLS stranger with its own key.
	s := &Runner{Keys: strangerKeys, Dial: dialer(addr), Stdin: strings.NewReader("stranger\n"), ReconnectWithin: time.Millisecond}
	_, err = s.Run(testCtx(t))
	if !errors.Is(err, CodePeerRefused) {
		t.Fatalf("a stranger's Run() = %v, want %s", err, CodePeerRefused)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("strangers started %d processes", n)
	}

	// The pinned Runner opens.
	var out bytes.Buffer
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: strings.NewReader("runner\n"), Stdout: &out}
	if status, err := r.Run(testCtx(t)); err != nil || status != 0 || out.String() != "runner\n" {
		t.Fatalf("the pinned Runner's Run() = %d, %v, %q", status, err, out.String())
	}
}

// The Runner authenticates the provider too: a provider holding a key
// the Runner did not pin is refused before any stdin leaves.
func TestRunnerRefusesAnUnpinnedProvider(t *testing.T) {
	impostor := mustKeys(strangerKeyPEM, runnerPubPEM) // pins the Runner; the Runner does not pin it
	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat"), Keys: impostor})
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: strings.NewReader("secret input\n")}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, CodePeerRefused) {
		t.Fatalf("Run() against an unpinned provider = %v, want %s", err, CodePeerRefused)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("the impostor started %d processes for the Runner", n)
	}
}

// Authentication survives cuts: every reconnection is a new handshake,
// and stdin is still applied exactly once.
func TestTLSThroughCuts(t *testing.T) {
	addr := startServer(t, &Server{Command: command("sha256sum"), InputCredit: 64 << 10})
	proxy, err := cutproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	input := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var out bytes.Buffer
	r := &Runner{Keys: runnerKeys, Dial: dialer(proxy.Addr()), Stdin: &cuttingReader{r: bytes.NewReader(input), proxy: proxy, every: 300 << 10}, Stdout: &out}
	if status, err := r.Run(testCtx(t)); err != nil || status != 0 {
		t.Fatalf("Run() = %d, %v", status, err)
	}
	sum := sha256.Sum256(input)
	if want := hexString(sum[:]) + "  -\n"; out.String() != want {
		t.Fatalf("sha256sum through TLS and cuts printed %q, want %q", out.String(), want)
	}
	if proxy.Cuts() < 2 {
		t.Errorf("only %d cuts happened", proxy.Cuts())
	}
}

// Fail closed: without Keys or InsecureNoAuth neither side speaks over
// TCP.
func TestAuthRequiredByDefault(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // Serve refuses before it accepts; a Serve that accepted would fail on the closed listener
	if err := (&Server{Command: command("cat")}).Serve(ln); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Serve over TCP without Keys = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	addr := startServer(t, &Server{Command: command("cat")})
	if _, err := (&Runner{Dial: dialer(addr)}).Run(testCtx(t)); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Run over TCP without Keys = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	if _, err := NewKeys(runnerKeyPEM); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("NewKeys without a peer = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// TLS 1.2, or a client without the wire's protocol, is refused.
func TestOnlyTLS13(t *testing.T) {
	addr := startServer(t, &Server{Command: command("cat")})
	cfg := runnerKeys.tlsConfig(false)
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	if c, err := tls.Dial("tcp", addr, cfg); err == nil {
		c.Close()
		t.Fatal("a TLS 1.2 handshake succeeded")
	}
}

// The socket Listen creates is 0600 even under umask 0, so another user
// cannot connect to it at all.
func TestUnixSocketMode0600WhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := t.TempDir() + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	ln.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}
}

// dialRaw opens an authenticated connection to a test provider for tests
// that speak frames by hand.
func dialRaw(addr string) (net.Conn, error) {
	return tls.Dial("tcp", addr, runnerKeys.tlsConfig(false))
}

// strangerEnv makes the test binary act as a stranger who dials the Unix
// socket named by its value, sends open and prints what came back.
const strangerEnv = "CHECKFU_WIRE_TEST_STRANGER"

func strangerOpens(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial error:", err)
		return 0
	}
	defer c.Close()
	open, _ := frame.Append(nil, &frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: frame.ProcessID{7}})
	c.Write(open)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var f frame.Frame
	if err := frame.NewDecoder(c).Decode(&f); err != nil {
		fmt.Println("read error:", err)
		return 0
	}
	fmt.Println(f.Type, f.Code)
	return 0
}

// Over a Unix socket the provider checks the peer's uid (SO_PEERCRED).
// The socket here is deliberately made world-connectable, so that only the
// uid check stands between another user and the process.
func TestUnixPeerOfAnotherUIDRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a peer as another user")
	}
	dir, err := os.MkdirTemp("", "wire-uid")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := dir + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Chmod(dir, 0o755), os.Chmod(path, 0o666)); err != nil {
		t.Fatal(err)
	}
	var started atomic.Int32
	srv := &Server{Command: countingCommand(&started, "cat")}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	self, err := os.ReadFile(os.Args[0]) // the build directory is closed to uid 65534
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/stranger", self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dir+"/stranger", "-test.run=^$")
	cmd.Env = append(os.Environ(), strangerEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("stranger: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "refuse "+string(CodePeerRefused) {
		t.Fatalf("a peer running as uid 65534 got %q, want %q", got, "refuse "+string(CodePeerRefused))
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("a peer of another uid started %d processes", n)
	}
}
