package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// TestConnectTimeCheck drives the connect-time hook on its own: an address
// that never went through resolution (as if a resolver had changed its
// answer after the check) must still be refused at the socket, against a
// live listener.
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
	c, err := d.dialAddrs(context.Background(), "tcp", "rebound.example.test:1", []netip.Addr{ap.Addr()}, ap.Port(), nil)
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

// TestDialerAsksOnlyTheNameLookedUp drives the Dialer's resolver with a
// question for another name than the one lookup put in the context, as a
// resolver expanding a search list would ask: the query must never leave
// the host, so its answer cannot be used.
func TestDialerAsksOnlyTheNameLookedUp(t *testing.T) {
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer dns.Close()
	dns.Set("asked.test", netip.MustParseAddr("198.51.100.1"))
	dns.Set("asked.test.evil.test", netip.MustParseAddr("198.51.100.2"))
	d, err := NewDialer(DialerConfig{Resolver: dns.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), askedKey{}, "asked.test.")
	if addrs, err := d.resolver.LookupNetIP(ctx, "ip", "asked.test.evil.test."); err == nil {
		t.Fatalf("resolver answered another name: %v", addrs)
	}
	if n := dns.Queries("asked.test.evil.test"); n != 0 {
		t.Fatalf("the other name was asked %d times", n)
	}
	if addrs, err := d.resolver.LookupNetIP(ctx, "ip", "asked.test."); err != nil || len(addrs) != 1 {
		t.Fatalf("resolver for the name asked = %v, %v", addrs, err)
	}
}
