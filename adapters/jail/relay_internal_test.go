package jail

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// watchdog bounds a wait that must end, against a hung test: it is no
// timing assertion (what the tests wait for happens at once, or at a
// grace the test fires itself).
const watchdog = 20 * time.Second

// closeNotify is a listener that says when it is closed.
type closeNotify struct {
	net.Listener
	closed chan struct{}
}

func (l *closeNotify) Close() error {
	err := l.Listener.Close()
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return err
}

// TestRelayStopGrace: at its edge. While the grace lasts, stop takes no
// connection but cuts none: a held connection still carries bytes both
// ways, and one that ends on its own ends whole. When the grace is over,
// stop closes the held connection, both sides (the peer and the far
// side read their end), and returns with nothing of the relay left.
func TestRelayStopGrace(t *testing.T) {
	far, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	farConns := acceptInto(far, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := &closeNotify{Listener: ln, closed: make(chan struct{})}
	d := &net.Dialer{Timeout: relayDialTimeout}
	r := startRelay(front, 0, func(ctx context.Context) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", far.Addr().String())
	})

	// held stays open; ending ends on its own during the grace.
	held, heldFar := relayedPair(t, front.Addr().String(), farConns)
	defer held.Close()
	defer heldFar.Close()
	ending, endingFar := relayedPair(t, front.Addr().String(), farConns)
	defer ending.Close()
	defer endingFar.Close()

	grace := make(chan time.Time)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.stop(grace)
	}()
	released := false
	release := func() { // a hung stop: end what it waits for, for the test to end
		if !released {
			released = true
			held.Close()
			heldFar.Close()
		}
	}
	defer func() {
		release()
		<-stopped
	}()
	select {
	case <-front.closed:
	case <-time.After(watchdog):
		t.Fatal("stop did not close the relay's listener")
	}
	if c, err := net.Dial("tcp", front.Addr().String()); err == nil {
		c.Close()
		t.Error("the relay took a connection after stop began")
	}

	// During the grace: nothing is cut.
	exchange(t, "held, during the grace", held, heldFar, "ping", "pong")
	exchange(t, "ending, during the grace", ending, endingFar, "last", "answer")
	endingFar.Close()
	if b, err := readAll(ending); err != nil || len(b) != 0 {
		t.Errorf("ending, closed by its far side: read %q, %v; want its end", b, err)
	}
	ending.Close()
	select {
	case <-stopped:
		t.Fatal("stop returned before the grace was over, with a connection held")
	default:
	}

	// The grace is over: the held connection is closed, both sides.
	close(grace)
	select {
	case <-stopped:
	case <-time.After(watchdog):
		t.Error("stop did not return once the grace was over")
		release()
		<-stopped
	}
	if b, err := readAll(held); len(b) != 0 || err != nil && isTimeout(err) {
		t.Errorf("the workload's side after the grace: read %q, %v; want it closed", b, err)
	}
	if b, err := readAll(heldFar); len(b) != 0 || err != nil && isTimeout(err) {
		t.Errorf("the far side after the grace: read %q, %v; want it closed", b, err)
	}
	r.mu.Lock()
	left := len(r.conns)
	r.mu.Unlock()
	if left != 0 {
		t.Errorf("the relay holds %d connections after stop", left)
	}
}

// relayedPair dials the relay at addr and returns the connection with
// its far side, once a byte has crossed.
func relayedPair(t *testing.T, addr string, farConns <-chan net.Conn) (net.Conn, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	var f net.Conn
	select {
	case f = <-farConns:
	case <-time.After(watchdog):
		t.Fatal("the relay dialled no far side")
	}
	f.SetReadDeadline(time.Now().Add(watchdog))
	if _, err := io.ReadFull(f, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	return c, f
}

// exchange sends out from a to b, and back from b to a.
func exchange(t *testing.T, what string, a, b net.Conn, out, back string) {
	t.Helper()
	for _, x := range []struct {
		from, to net.Conn
		msg      string
	}{{a, b, out}, {b, a, back}} {
		if _, err := x.from.Write([]byte(x.msg)); err != nil {
			t.Errorf("%s: write %q: %v", what, x.msg, err)
			return
		}
		x.to.SetReadDeadline(time.Now().Add(watchdog))
		buf := make([]byte, len(x.msg))
		if _, err := io.ReadFull(x.to, buf); err != nil || string(buf) != x.msg {
			t.Errorf("%s: read %q, %v; want %q", what, buf, err, x.msg)
			return
		}
	}
}

// readAll reads c to its end, within the watchdog.
func readAll(c net.Conn) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(watchdog))
	return io.ReadAll(c)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// acceptInto accepts on ln until it is closed, handing each connection
// to the channel it returns (of capacity n).
func acceptInto(ln net.Listener, n int) <-chan net.Conn {
	conns := make(chan net.Conn, n)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	return conns
}
