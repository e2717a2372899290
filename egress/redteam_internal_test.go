package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
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
//
// Mutant: deleting the host-address check in permit makes this test fail.
func TestDialerRefusesThisHostsPublicAddress(t *testing.T) {
	own := netip.MustParseAddr("1.2.3.4")
	own6 := netip.MustParseAddr("2a00:1450::4")
	d := &Dialer{self: &hostAddrs{load: func() ([]netip.Addr, error) { return []netip.Addr{own, own6}, nil }}}
	for _, a := range []netip.Addr{own, own6, netip.MustParseAddr("::ffff:1.2.3.4")} {
		err := d.permit("self.example.test", netip.AddrPortFrom(a, 22))
		if !errors.Is(err, CodeDestinationNotPublic) {
			t.Errorf("permit(%v) = %v, want %s", a, err, CodeDestinationNotPublic)
		}
	}
	if err := d.permit("other.example.test", netip.AddrPortFrom(netip.MustParseAddr("1.2.3.5"), 22)); err != nil {
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

// TestHostAddrsKeepsOnlyPublic checks the real interfaces: only public
// addresses are kept (loopback and test blocks stay dialable under
// TreatAsPublicForTesting), and a failed refresh keeps the last list.
func TestHostAddrsKeepsOnlyPublic(t *testing.T) {
	calls := 0
	h := &hostAddrs{load: func() ([]netip.Addr, error) {
		calls++
		if calls > 1 {
			return nil, errors.New("netlink failed")
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("1.2.3.4")}, nil
	}}
	if !h.has(netip.MustParseAddr("1.2.3.4")) || h.has(netip.MustParseAddr("127.0.0.1")) || h.has(netip.MustParseAddr("198.18.0.1")) {
		t.Fatalf("host addresses = %v, want only the public 1.2.3.4", h.snapshot())
	}
	aged := *h.cur.Load()
	aged.at = aged.at.Add(-2 * hostAddrsTTL)
	h.cur.Store(&aged)
	if !h.has(netip.MustParseAddr("1.2.3.4")) || calls != 2 {
		t.Errorf("after a failed refresh (%d loads) the public address is forgotten", calls)
	}
	if _, err := interfaceAddrs(); err != nil {
		t.Errorf("interfaceAddrs: %v", err)
	}
}

// TestUpstreamPoolBoundsIdleConnections has a workload spray distinct
// destinations (under "unrestricted", one wildcard DNS record gives it as
// many as it likes) so that each leaves idle connections in the guard's
// pool. The pool must hold a bounded number in all, not 64 per
// destination without end: every idle connection holds a descriptor.
//
// Mutant: deleting the total bound in upstreamPool.put makes this test
// fail.
func TestUpstreamPoolBoundsIdleConnections(t *testing.T) {
	var p upstreamPool
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
