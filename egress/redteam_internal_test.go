package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"
)

// TestDialerRefusesThisHostsPublicAddress gives the host a public
// interface address (by the Dialer's view of its interfaces, since a test
// cannot assign one) and asks for it. Traffic from a host to its own
// public address stays on the host: it reaches services bound to every
// interface and passes none of the network's filters (a cloud security
// group never sees it), so a workload must not be able to name it, by
// literal or by a DNS answer, whatever the policy.
func TestDialerRefusesThisHostsPublicAddress(t *testing.T) {
	own := netip.MustParseAddr("1.2.3.4")
	own6 := netip.MustParseAddr("2a00:1450::4")
	d := &Dialer{self: &hostAddrs{load: func() ([]netip.Addr, error) { return []netip.Addr{own, own6}, nil }}}
	for _, a := range []netip.Addr{own, own6, netip.MustParseAddr("::ffff:1.2.3.4")} {
		err := d.permit("self.example.test", netip.AddrPortFrom(a, 22), d.host().current())
		if !errors.Is(err, CodeDestinationNotPublic) {
			t.Errorf("permit(%v) = %v, want %s", a, err, CodeDestinationNotPublic)
		}
	}
	if err := d.permit("other.example.test", netip.AddrPortFrom(netip.MustParseAddr("1.2.3.5"), 22), d.host().current()); err != nil {
		t.Errorf("permit(another public address) = %v", err)
	}
	// The literal is refused before anything is dialled. The context is
	// already cancelled, so that even a mutant Dialer sends no packet to
	// the (real, public) address.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := d.DialContext(ctx, "tcp", "1.2.3.4:22")
	if !errors.Is(err, CodeDestinationNotPublic) {
		t.Errorf("DialContext(own address) = %v, want %s", err, CodeDestinationNotPublic)
	}
}

// TestHostAddrsIsCurrent: the host's addresses are read at every dial,
// every class kept, and a failed read keeps the last list.
func TestHostAddrsIsCurrent(t *testing.T) {
	list := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:198.18.0.1")}
	fail := false
	h := &hostAddrs{load: func() ([]netip.Addr, error) {
		if fail {
			return nil, errors.New("netlink failed")
		}
		return append([]netip.Addr(nil), list...), nil
	}}
	want := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("198.18.0.1")}
	if got := h.current(); !slices.Equal(got, want) {
		t.Fatalf("current = %v, want %v", got, want)
	}
	list = append(list, netip.MustParseAddr("1.2.3.4"))
	want = append(want, netip.MustParseAddr("1.2.3.4"))
	if got := h.current(); !slices.Equal(got, want) {
		t.Fatalf("after an address was added: current = %v, want %v", got, want)
	}
	fail = true
	if got := h.current(); !slices.Equal(got, want) {
		t.Fatalf("after a failed read: current = %v, want the last list %v", got, want)
	}
	if _, err := interfaceAddrs(); err != nil {
		t.Errorf("interfaceAddrs: %v", err)
	}
}

// TestDialerRefusesOwnAddressesAtDialTime is issue 11's repro. With a
// block treated as public, the guard's own address in that block (a test
// network's) was dialable, and an address assigned after the Dialer was
// built escaped an unspecified listener's exclusion. Both are refused at
// the first dial after the address appears; a loopback address treated
// as public stays dialable (a loopback topology's destinations live on
// this host), except on the listener's port.
func TestDialerRefusesOwnAddressesAtDialTime(t *testing.T) {
	var own []netip.Addr
	d, err := NewDialer(DialerConfig{
		TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("127.0.0.0/8")},
		Exclude:                 []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:3128")},
	})
	if err != nil {
		t.Fatal(err)
	}
	d.self = &hostAddrs{load: func() ([]netip.Addr, error) { return append([]netip.Addr(nil), own...), nil }}
	guardAddr := netip.MustParseAddr("198.18.5.2")
	check := func(ap string, want bool) {
		t.Helper()
		err := d.permit("x.example.test", netip.MustParseAddrPort(ap), d.host().current())
		if (err == nil) != want || err != nil && !errors.Is(err, CodeDestinationNotPublic) {
			t.Errorf("permit(%s) with host addresses %v = %v, want allowed %v", ap, own, err, want)
		}
	}
	check("198.18.5.2:80", true) // not (yet) this host's
	check("198.18.5.2:3128", true)
	own = append(own, guardAddr, netip.MustParseAddr("127.0.0.1"))
	check("198.18.5.2:80", false)   // the guard's own test-network address
	check("198.18.5.2:3128", false) // and its listener there
	check("198.18.5.3:80", true)    // another host of the test network
	check("127.0.0.1:80", true)     // loopback treated as public
	check("127.0.0.1:3128", false)  // but never the listener
	check("127.0.0.9:3128", false)
	// Through DialContext, refused before anything is dialled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.DialContext(ctx, "tcp", "198.18.5.2:80"); !errors.Is(err, CodeDestinationNotPublic) {
		t.Errorf("DialContext(own address) = %v, want %s", err, CodeDestinationNotPublic)
	}
}

// TestUpstreamPoolBoundsIdleConnections has a workload spray distinct
// destinations (under "unrestricted", one wildcard DNS record gives it as
// many as it likes) so that each leaves idle connections in the guard's
// pool. The pool must hold a bounded number in all, not 64 per
// destination without end: every idle connection holds a descriptor.
func TestUpstreamPoolBoundsIdleConnections(t *testing.T) {
	p := upstreamPool{maxIdle: maxIdleTotal}
	t.Cleanup(p.closeAll)
	for i := range 4 * maxIdleTotal {
		a, b := net.Pipe()
		b.Close()
		p.put("d"+strconv.Itoa(i)+".example.test:80", newUpstreamConn(a))
	}
	p.mu.Lock()
	n := 0
	for _, list := range p.idle {
		n += len(list)
	}
	keys := len(p.idle)
	p.mu.Unlock()
	if n > maxIdleTotal || keys > maxIdleTotal {
		t.Fatalf("pool holds %d idle connections under %d destinations, want at most %d", n, keys, maxIdleTotal)
	}
}
