package egress

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestRefusingConnectionsBound: a connection refused past MaxConnections
// is read on for up to a second after its answer (so that closing it
// does not reset the answer away) on at most RefusingConnections
// connections at once; with all of them taken, the next refused
// connection is closed as soon as its answer is written, and with one
// free it is held.
func TestRefusingConnectionsBound(t *testing.T) {
	g, _ := startGuard(t, GuardConfig{})
	if cap(g.refusing) != RefusingConnections {
		t.Fatalf("the refusals read on at once are bounded by %d, want RefusingConnections (%d)", cap(g.refusing), RefusingConnections)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// refuse has the guard refuse one loopback connection and returns
	// the guard's side of it once the refusal has returned, after
	// checking the workload's side read the whole answer.
	refuse := func() net.Conn {
		workload, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { workload.Close() })
		guardSide, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { guardSide.Close() })
		g.refuseConn(guardSide)
		workload.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, len(connRefusal))
		if n, err := io.ReadFull(workload, b); string(b[:n]) != connRefusal {
			t.Fatalf("the refused connection read %q, %v; want the refusal", b[:n], err)
		}
		return guardSide
	}
	for range RefusingConnections {
		g.refusing <- struct{}{}
	}
	// A closed connection refuses a write with net.ErrClosed; one only
	// half-closed (its answer written, still read) with another error.
	if _, err := refuse().Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("with all %d refusals reading on, the next refused connection is still open (a write: %v)", RefusingConnections, err)
	}
	<-g.refusing
	refuse()
	if held := len(g.refusing); held != RefusingConnections {
		t.Fatalf("with one refusal free, the next refused connection was not read on: %d of %d held", held, RefusingConnections)
	}
}
