package egress

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestGuardServerBounds: the guard's server takes its header and
// keep-alive timeouts from the named bounds.
func TestGuardServerBounds(t *testing.T) {
	g, _ := newHeaderGuard(t)
	if g.srv.ReadHeaderTimeout != HeaderTimeout || g.srv.IdleTimeout != KeepAliveTimeout {
		t.Errorf("server timeouts: header %v, keep-alive %v; want %v, %v", g.srv.ReadHeaderTimeout, g.srv.IdleTimeout, HeaderTimeout, KeepAliveTimeout)
	}
	if HeaderTimeout != 30*time.Second || KeepAliveTimeout != 120*time.Second {
		t.Errorf("HeaderTimeout %v, KeepAliveTimeout %v; the documented bounds are 30s and 120s", HeaderTimeout, KeepAliveTimeout)
	}
}

// newHeaderGuard builds a guard that is not yet serving, so that a test
// may shorten its server's timeouts, and returns it with its address.
func newHeaderGuard(t *testing.T) (*Guard, string) {
	t.Helper()
	p, err := ParseNetworkPolicy([]byte(`{"type":"unrestricted"}`))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGuard(GuardConfig{Policy: pol, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Shutdown(context.Background()); ln.Close() })
	return g, ln.Addr().String()
}

// TestGuardHeaderTimeoutEdge: a header still unfinished at the header
// timeout gets its connection closed then, not before; one finished
// just inside it is answered. The bound is shortened to 1s here;
// TestGuardServerBounds holds the real one.
func TestGuardHeaderTimeoutEdge(t *testing.T) {
	const bound = time.Second
	g, addr := newHeaderGuard(t)
	g.srv.ReadHeaderTimeout = bound
	go g.Serve()

	// Unfinished: the last line never ends. The clock starts before
	// the dial: the guard's starts when it begins to read, not earlier.
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * bound))
	n, err := c.Read(make([]byte, 1))
	took := time.Since(start)
	if n != 0 || err == nil || isTimeout(err) {
		t.Fatalf("an unfinished header: read %d bytes, %v; want the connection closed", n, err)
	}
	if took < bound {
		t.Errorf("an unfinished header's connection closed after %v, before the %v bound", took, bound)
	}

	// Finished inside the bound, after most of it has passed: answered
	// (the guard refuses the malformed target; any answer will do).
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "GET http://[::1/ HTTP/1.1\r\nHost: x\r\n")
	time.Sleep(bound / 2)
	io.WriteString(c2, "\r\n")
	c2.SetReadDeadline(time.Now().Add(10 * bound))
	line := make([]byte, 12)
	if _, err := io.ReadFull(c2, line); err != nil || !strings.HasPrefix(string(line), "HTTP/1.1 ") {
		t.Errorf("a header finished inside the bound: %q, %v; want an answer", line, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
