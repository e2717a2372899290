//go:build linux

package jail

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/egress"
)

// TestJailRelayConnBound: a jail's relay at MaxRelayConns. Each of
// MaxRelayConns connections held open is carried to the guard's socket
// (a stand-in the test listens on); one more is closed at accept,
// dialling nothing. A carried connection half-closed by the workload
// still carries the far side's answer, and the far side's half-close
// reaches the workload; once both ends are closed its place is taken
// by a new connection.
func TestJailRelayConnBound(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "guard.sock")
	guard, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	farConns := acceptInto(guard, 2*MaxRelayConns)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := startJailRelay(ln, sock)
	defer r.stop(expired)
	addr := ln.Addr().String()

	type pair struct{ c, f net.Conn }
	var held []pair
	defer func() {
		for _, p := range held {
			p.c.Close()
			p.f.Close()
		}
	}()
	for range MaxRelayConns {
		c, f := relayedPair(t, addr, farConns)
		held = append(held, pair{c, f})
	}

	// One more: closed at accept, nothing dialled.
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if b, err := readAll(extra); err != nil || len(b) != 0 {
		t.Fatalf("connection %d past the bound: read %q, %v; want it closed at accept", MaxRelayConns+1, b, err)
	}
	select {
	case f := <-farConns:
		f.Close()
		t.Fatalf("connection %d past the bound reached the guard's socket", MaxRelayConns+1)
	default:
	}

	// Half-closes, each way, on a carried connection.
	p := held[0]
	if err := p.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b, err := readAll(p.f); err != nil || len(b) != 0 {
		t.Fatalf("the guard's side after the workload's half-close: read %q, %v; want its end", b, err)
	}
	if _, err := p.f.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	p.c.SetReadDeadline(time.Now().Add(watchdog))
	buf := make([]byte, len("answer"))
	if _, err := io.ReadFull(p.c, buf); err != nil || string(buf) != "answer" {
		t.Fatalf("the answer after the workload's half-close: %q, %v", buf, err)
	}
	if err := p.f.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b, err := readAll(p.c); err != nil || len(b) != 0 {
		t.Fatalf("the workload after the guard's half-close: read %q, %v; want its end", b, err)
	}
	p.c.Close()
	p.f.Close()
	held = held[1:]

	// Its place is free again (once the relay has seen both ends; a
	// connection refused meanwhile reads its end at once).
	deadline := time.Now().Add(watchdog)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("x"))
		select {
		case f := <-farConns:
			held = append(held, pair{c, f})
			return
		case <-time.After(50 * time.Millisecond):
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the place of a closed connection was not freed")
		}
	}
}

// TestGuardStopCutsASlowloris: a peer on the guard's socket that sends
// a CONNECT line a byte at a time, and keeps sending through the stop,
// holds the guard's stop no longer than GuardStopGrace: the stop
// returns (within the watchdog, no timing asserted) and the peer reads
// its end.
func TestGuardStopCutsASlowloris(t *testing.T) {
	sock, stop, err := LocalGuard(GuardOptions{Logger: slog.New(slog.DiscardHandler)})(context.Background(),
		[]egress.HostPort{{Host: "allowed.test", Port: 443}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line := []byte("CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n")
	quit := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for k := 0; ; k = (k + 1) % len(line) {
			if _, err := c.Write(line[k : k+1]); err != nil {
				return
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(quit); <-sent }()
	time.Sleep(200 * time.Millisecond) // some of the line is in the guard
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("stop: %v", err)
		}
	case <-time.After(watchdog):
		t.Fatal("the guard's stop did not return while a slowloris held its socket")
	}
	// Its end: EOF, or a reset (the relay closed its side with the
	// slowloris's bytes unread); only a read still waiting fails.
	if b, err := readAll(c); isTimeout(err) {
		t.Errorf("the slowloris after the stop: read %q, %v; want its end", b, err)
	}
}

// failingListener fails its first Accept with err, then accepts.
type failingListener struct {
	net.Listener
	err    error
	failed bool
}

func (l *failingListener) Accept() (net.Conn, error) {
	if !l.failed {
		l.failed = true
		return nil, l.err
	}
	return l.Listener.Accept()
}

// TestRelayServesOnAfterAShortage: an Accept that fails for want of
// descriptors (EMFILE, what a flood in the Runner's other jails can
// cause) does not end the relay: the next connection is carried. Any
// other error (the listener's close) still ends the accept loop, which
// stop needs.
func TestRelayServesOnAfterAShortage(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "guard.sock")
	guard, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	farConns := acceptInto(guard, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if acceptCanRetry(net.ErrClosed) || acceptCanRetry(&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EINVAL)}) {
		t.Error("acceptCanRetry retries a closed or invalid listener")
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	r := startJailRelay(&failingListener{Listener: ln, err: emfile}, sock)
	defer r.stop(expired)
	c, f := relayedPair(t, ln.Addr().String(), farConns)
	c.Close()
	f.Close()
}
