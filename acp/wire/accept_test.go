package wire

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// fakeListener hands out the connections sent on conns, and an error for
// every value sent on errs; Close ends Accept with net.ErrClosed.
type fakeListener struct {
	conns    chan net.Conn
	errs     chan error
	closed   chan struct{}
	once     sync.Once
	mu       sync.Mutex
	accepted int
}

func newFakeListener() *fakeListener {
	return &fakeListener{conns: make(chan net.Conn), errs: make(chan error), closed: make(chan struct{})}
}

func (l *fakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		l.mu.Lock()
		l.accepted++
		l.mu.Unlock()
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *fakeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *fakeListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

// A descriptor limit reached once (EMFILE) must not end Serve: the
// provider keeps its process and its listener, and the next connection is
// served.
func TestServeSurvivesTemporaryAcceptErrors(t *testing.T) {
	ln := newFakeListener()
	srv := &Server{Command: command("echo", "still here"), InsecureNoAuth: true}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	for range 3 {
		select {
		case ln.errs <- emfile:
		case err := <-served:
			t.Fatalf("Serve returned %v after a temporary Accept error", err)
		}
	}
	r := &Runner{InsecureNoAuth: true, Dial: func(ctx context.Context) (net.Conn, error) {
		a, b := net.Pipe()
		select {
		case ln.conns <- b:
			return a, nil
		case err := <-served:
			return nil, errors.Join(errors.New("Serve ended"), err)
		}
	}}
	var out countWriter
	r.Stdout = &out
	if status, err := r.Run(testCtx(t)); err != nil || status != 0 || out != 11 {
		t.Fatalf("Run() after EMFILE = %d, %v (%d bytes); want 0, nil, 11 bytes", status, err, out)
	}
	// A permanent error still ends Serve.
	ln.errs <- errors.New("listener broken")
	if err := <-served; err == nil || err.Error() != "listener broken" {
		t.Fatalf("Serve() = %v after a permanent error, want it returned", err)
	}
}

// Connections that never send their first frame hold a slot each: at
// MaxPendingHandshakes, the next connection accepted drops the oldest of
// them, and only that one.
func TestServeCapsPendingHandshakes(t *testing.T) {
	ln := newFakeListener()
	srv := &Server{Command: command("true"), InsecureNoAuth: true}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var silent []net.Conn
	for range MaxPendingHandshakes + 1 {
		a, b := net.Pipe()
		ln.conns <- b
		silent = append(silent, a)
	}
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	silent[0].SetReadDeadline(time.Now().Add(handshakeTimeout / 3)) // dropped, not timed out
	if _, err := silent[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the oldest of %d silent connections: Read() = %v, want EOF (dropped)", MaxPendingHandshakes+1, err)
	}
	if n := ln.count(); n != MaxPendingHandshakes+1 { // counted before the drop it caused
		t.Fatalf("Serve accepted %d connections, want %d: it must keep accepting at the cap", n, MaxPendingHandshakes+1)
	}
	for _, c := range silent[1:] {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a newer silent connection: Read() = %v, want it still open", err)
		}
	}
}

// A refusal's message is cut to the refuse frame's bound on a character
// boundary.
func TestRefusalMessageCutOnACharacter(t *testing.T) {
	msg := strings.Repeat("é", frame.MaxRefusalMessage) // 2 bytes each
	if got := refusalMessage(msg); len(got) != frame.MaxRefusalMessage || !utf8.ValidString(got) {
		t.Fatalf("refusalMessage cut %d bytes to %d (valid UTF-8: %v), want %d valid", len(msg), len(got), utf8.ValidString(got), frame.MaxRefusalMessage)
	}
	if got := refusalMessage(strings.Repeat("x", frame.MaxRefusalMessage-1) + "é"); len(got) != frame.MaxRefusalMessage-1 {
		t.Fatalf("a character straddling the bound was kept in part: %d bytes", len(got))
	}
}
