//go:build linux

package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// TestConnectShare holds the share of the dial's timeout each address
// gets to its edges: an equal share, never under minConnectShare, never
// over what is left.
func TestConnectShare(t *testing.T) {
	for _, c := range []struct {
		remaining time.Duration
		left      int
		want      time.Duration
	}{
		{10 * time.Second, 1, 10 * time.Second},
		{10 * time.Second, 4, 2500 * time.Millisecond},
		{10 * time.Second, 5, minConnectShare},
		{10 * time.Second, 6, minConnectShare},
		{10 * time.Second, 100, minConnectShare},
		{minConnectShare - time.Nanosecond, 3, minConnectShare - time.Nanosecond},
		{time.Second, 1, time.Second},
		{0, 4, 0},
	} {
		if got := connectShare(c.remaining, c.left); got != c.want {
			t.Errorf("connectShare(%v, %d) = %v, want %v", c.remaining, c.left, got, c.want)
		}
	}
}

// TestDialOfManyDeadAddressesIsBounded: a name whose answer holds many
// addresses that never answer a connect (here, loopback listeners whose
// accept queue is full, so the kernel drops every further SYN) holds
// the dial for the Dialer's Timeout, not for Timeout per address.
func TestDialOfManyDeadAddressesIsBounded(t *testing.T) {
	const dead = 6
	const timeout = 1500 * time.Millisecond
	addrs, port := deadListeners(t, dead)
	d := Dialer{timeout: timeout, treatAsPublic: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	start := time.Now()
	c, err := d.dialAddrs(context.Background(), "tcp", "dead.example.test:1", addrs, port, nil)
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("dialAddrs connected to a dead address")
	}
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Code != CodeUpstreamConnectFailed {
		t.Fatalf("dialAddrs = %v, want %s", err, CodeUpstreamConnectFailed)
	}
	// Unbounded, each address would take the whole timeout: 9 s here.
	if took > 2*timeout {
		t.Fatalf("dialling %d dead addresses took %v, want about %v (the Dialer's Timeout)", dead, took, timeout)
	}
}

// deadListeners returns n loopback addresses (127.0.0.21 on) on one port,
// each a listener with a backlog of zero whose accept queue the test has
// filled, so a further connect to it is never answered. The test's
// cleanup closes them.
func deadListeners(t *testing.T, n int) ([]netip.Addr, uint16) {
	t.Helper()
	for try := 0; try < 20; try++ {
		var addrs []netip.Addr
		var port uint16
		ok := true
		for i := range n {
			a := netip.AddrFrom4([4]byte{127, 0, 0, byte(21 + i)})
			p, err := deadListener(t, a, port)
			if err != nil {
				ok = false
				break
			}
			addrs, port = append(addrs, a), p
		}
		if ok {
			return addrs, port
		}
	}
	t.Fatal("no free loopback port for the dead listeners")
	return nil, 0
}

// deadListener binds a listener with a backlog of zero to a:port (any
// port when port is 0), fills its accept queue and returns its port.
func deadListener(t *testing.T, a netip.Addr, port uint16) (uint16, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: a.As4(), Port: int(port)}); err != nil {
		return 0, err
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	bound := uint16(sa.(*syscall.SockaddrInet4).Port)
	target := netip.AddrPortFrom(a, bound).String()
	// Fill the queue: connects that complete stay queued, never accepted;
	// the first that times out shows the queue is full.
	for range 8 {
		c, err := net.DialTimeout("tcp", target, 200*time.Millisecond)
		if err != nil {
			return bound, nil
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatalf("the listener on %s with a backlog of zero kept accepting", target)
	return 0, nil
}
