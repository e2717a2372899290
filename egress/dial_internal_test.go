package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestConnectTimeCheck drives the connect-time hook on its own: an address
// that never went through resolution (as if a resolver had changed its
// answer after the check) must still be refused at the socket, against a
// live listener.
//
// Mutant: deleting ControlContext from dialAddrs, or the check in control,
// makes this test fail (the live private listener accepts).
func TestConnectTimeCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	ap := ln.Addr().(*net.TCPAddr).AddrPort()

	var d Dialer
	c, err := d.dialAddrs(context.Background(), "tcp", "rebound.example.test:1", []netip.Addr{ap.Addr()}, ap.Port())
	if err == nil {
		c.Close()
		t.Fatalf("dialAddrs reached the private listener %v", ap)
	}
	if !errors.Is(err, CodeDestinationNotPublic) {
		t.Fatalf("dialAddrs = %v, want %s", err, CodeDestinationNotPublic)
	}
	var r *checkfu.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("dialAddrs = %T, want *checkfu.Refusal", err)
	}
	select {
	case <-accepted:
		t.Fatalf("private listener accepted a connection")
	default:
	}
}
