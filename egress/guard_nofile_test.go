//go:build linux

package egress_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/egress"
)

// lowNofile is the RLIMIT_NOFILE of the guard in
// TestGuardAnswersAtLowDescriptorLimit.
const lowNofile = 64

// TestGuardAnswersAtLowDescriptorLimit runs a guard with RLIMIT_NOFILE
// at 64 in a child process (this test binary, re-executed), holds more
// idle connections than it has descriptors, and shows that a new client
// is still answered: refused with connection_limit_reached, not left
// unanswered.
func TestGuardAnswersAtLowDescriptorLimit(t *testing.T) {
	if os.Getenv("CHECKFU_TEST_LOW_NOFILE_CHILD") == "1" {
		lowNofileChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardAnswersAtLowDescriptorLimit$")
	cmd.Env = append(os.Environ(), "CHECKFU_TEST_LOW_NOFILE_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the child exits when its stdin ends
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child gave no address: %v", err)
	}
	addr := line[:len(line)-1]
	// More idle connections than the guard has descriptors: none sends
	// a byte.
	for range 2 * lowNofile {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a new client at the descriptor limit got no answer: %v", err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(egress.RefusalHeader); resp.StatusCode != http.StatusServiceUnavailable || got != string(egress.CodeConnectionLimitReached) {
		t.Fatalf("answer = %d %s=%q, want 503 %s", resp.StatusCode, egress.RefusalHeader, got, egress.CodeConnectionLimitReached)
	}
}

// lowNofileChild serves a guard with RLIMIT_NOFILE at lowNofile until its
// stdin ends, then exits.
func lowNofileChild() {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "child:", err); os.Exit(2) }
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fail(err)
	}
	lim.Cur = lowNofile
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fail(err)
	}
	p, err := egress.ParseNetworkPolicy([]byte(`{"type":"unrestricted"}`))
	if err != nil {
		fail(err)
	}
	cp, err := p.Compile(nil)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	g, err := egress.NewGuard(egress.GuardConfig{Policy: cp, Listener: ln, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail(err)
	}
	go g.Serve()
	fmt.Println(ln.Addr())
	var b [1]byte
	os.Stdin.Read(b[:])
	os.Exit(0)
}
