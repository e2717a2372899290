package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// newTestDialer returns a Dialer resolving with dns and treating only
// 127.0.0.1 as public.
func newTestDialer(t *testing.T, dnsAddr string, exclude ...netip.AddrPort) *egress.Dialer {
	t.Helper()
	d, err := egress.NewDialer(egress.DialerConfig{Resolver: dnsAddr, TreatAsPublicForTesting: loopback1, Exclude: exclude})
	if err != nil {
		t.Fatalf("NewDialer: %v", err)
	}
	return d
}

func hostPort(host string, port uint16) string {
	return host + ":" + strconv.Itoa(int(port))
}

// TestDialerRebinding points an admitted name at a LIVE listener on a
// private address and checks the dialer refuses without ever connecting,
// while the same dialer reaches the legitimate upstream.
func TestDialerRebinding(t *testing.T) {
	dns := startDNS(t)
	private := listenLive(t, "127.0.0.2:0")
	legit := listenLive(t, "127.0.0.1:0")
	dns.Set("rebind.example.test", netip.MustParseAddr("127.0.0.2"))
	dns.Set("legit.example.test", netip.MustParseAddr("127.0.0.1"))
	d := newTestDialer(t, dns.Addr())

	_, err := d.DialContext(context.Background(), "tcp", hostPort("rebind.example.test", private.addrPort().Port()))
	wantRefusal(t, err, egress.CodeDestinationNotPublic)
	if n := private.accepted.Load(); n != 0 {
		t.Fatalf("private listener accepted %d connections, want 0", n)
	}

	c, err := d.DialContext(context.Background(), "tcp", hostPort("legit.example.test", legit.addrPort().Port()))
	if err != nil {
		t.Fatalf("dial legit: %v", err)
	}
	c.Close()
}

// TestDialerMixedAnswersPoisonName checks the documented semantics: one
// non-public answer refuses the whole name, even when a public answer
// comes first and would connect.
func TestDialerMixedAnswersPoisonName(t *testing.T) {
	dns := startDNS(t)
	legit := listenLive(t, "127.0.0.1:0")
	port := legit.addrPort().Port()
	private := listenLive(t, hostPort("127.0.0.2", port))
	dns.Set("mixed.example.test", netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"))
	d := newTestDialer(t, dns.Addr())

	_, err := d.DialContext(context.Background(), "tcp", hostPort("mixed.example.test", port))
	wantRefusal(t, err, egress.CodeDestinationNotPublic)
	if n := legit.accepted.Load() + private.accepted.Load(); n != 0 {
		t.Fatalf("listeners accepted %d connections, want 0", n)
	}
}

// TestDialerLiterals checks IP literal destinations against live listeners.
func TestDialerLiterals(t *testing.T) {
	private := listenLive(t, "127.0.0.2:0")
	d := newTestDialer(t, "")
	for _, addr := range []string{
		private.Addr().String(),
		"[::ffff:127.0.0.2]:" + strconv.Itoa(int(private.addrPort().Port())),
	} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		wantRefusal(t, err, egress.CodeDestinationNotPublic)
	}
	if n := private.accepted.Load(); n != 0 {
		t.Fatalf("private listener accepted %d connections, want 0", n)
	}
}

// TestDialerExcludesOwnListener checks that the guard's own listener is
// never dialled, even when its block is treated as public.
func TestDialerExcludesOwnListener(t *testing.T) {
	dns := startDNS(t)
	self := listenLive(t, "127.0.0.1:0")
	dns.Set("loop.example.test", netip.MustParseAddr("127.0.0.1"))
	d := newTestDialer(t, dns.Addr(), self.addrPort())
	for _, addr := range []string{self.Addr().String(), hostPort("loop.example.test", self.addrPort().Port())} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		wantRefusal(t, err, egress.CodeDestinationNotPublic)
	}
	if n := self.accepted.Load(); n != 0 {
		t.Fatalf("own listener accepted %d connections, want 0", n)
	}
}

// TestDialerExcludesWildcardListenerOnLoopback checks that a listener on
// an unspecified address (which accepts on every loopback address, not
// only on the interface addresses) is never dialled through any loopback
// address when loopback is treated as public. The live listener on
// 127.0.0.3 stands in for the part of a 0.0.0.0 listener that 127.0.0.3
// reaches, so the test binds no wildcard address.
func TestDialerExcludesWildcardListenerOnLoopback(t *testing.T) {
	self := listenLive(t, "127.0.0.3:0")
	port := self.addrPort().Port()
	d, err := egress.NewDialer(egress.DialerConfig{
		TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Exclude:                 []netip.AddrPort{netip.AddrPortFrom(netip.IPv4Unspecified(), port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.DialContext(context.Background(), "tcp", hostPort("127.0.0.3", port))
	wantRefusal(t, err, egress.CodeDestinationNotPublic)
	if n := self.accepted.Load(); n != 0 {
		t.Fatalf("own listener accepted %d connections, want 0", n)
	}
}

// TestDialerUpstreamFailures checks that outages are UpstreamErrors, never
// refusals.
func TestDialerUpstreamFailures(t *testing.T) {
	dns := startDNS(t)
	dns.Set("down.example.test", netip.MustParseAddr("127.0.0.1"))
	d := newTestDialer(t, dns.Addr())

	_, err := d.DialContext(context.Background(), "tcp", hostPort("down.example.test", closedPort(t)))
	wantUpstream(t, err, egress.CodeUpstreamConnectFailed)

	_, err = d.DialContext(context.Background(), "tcp", "nxdomain.example.test:443")
	wantUpstream(t, err, egress.CodeDNSFailed)
}

// TestDialerRefusesNonCanonical checks that the dialer never reinterprets
// a name: what it dials is exactly what the caller matched.
func TestDialerRefusesNonCanonical(t *testing.T) {
	dns := startDNS(t)
	d := newTestDialer(t, dns.Addr())
	for _, addr := range []string{"LEGIT.example.test:443", "legit.example.test.:443", "legit.example.test:0443", "legit.example.test:0", "legit.example.test:65536", "legit.example.test"} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			t.Errorf("DialContext(%q) succeeded", addr)
			continue
		}
		if _, ok := egress.UpstreamCodeOf(err); ok {
			t.Errorf("DialContext(%q) = %v, want a refusal", addr, err)
		}
	}
	if n := len(dns.Log()); n != 0 {
		t.Errorf("non-canonical names caused %d DNS queries, want 0", n)
	}
	if _, err := d.DialContext(context.Background(), "udp", "legit.example.test:53"); err == nil {
		t.Errorf("DialContext(udp) succeeded")
	}
}

func TestNewDialerRefusesWideTestBlocks(t *testing.T) {
	for _, p := range []string{"0.0.0.0/0", "10.0.0.0/8", "169.254.169.254/32", "127.0.0.0/7", "::/0", "fe80::/10", "8.8.8.8/32"} {
		_, err := egress.NewDialer(egress.DialerConfig{TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix(p)}})
		wantRefusal(t, err, checkfu.CodeConfigInvalid)
	}
	if _, err := egress.NewDialer(egress.DialerConfig{TreatAsPublicForTesting: []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr("127.0.0.1"), 8)}}); err == nil {
		t.Errorf("NewDialer accepted the unmasked block 127.0.0.1/8")
	}
	if _, err := egress.NewDialer(egress.DialerConfig{Resolver: "dns.example.test:53"}); err == nil {
		t.Errorf("NewDialer accepted a resolver name")
	}
}

// TestDialerDNSErrorNamesTheResolverDialled is issue 11's repro: with a
// resolver configured, an NXDOMAIN named the resolv.conf server, which
// was never asked.
func TestDialerDNSErrorNamesTheResolverDialled(t *testing.T) {
	dns := startDNS(t)
	d := newTestDialer(t, dns.Addr())
	_, err := d.DialContext(context.Background(), "tcp", "nxdomain.example.test:443")
	wantUpstream(t, err, egress.CodeDNSFailed)
	var de *net.DNSError
	if !errors.As(err, &de) || de.Server != dns.Addr() || de.Name != "nxdomain.example.test" {
		t.Fatalf("DNS error = %#v, want server %s and name nxdomain.example.test", de, dns.Addr())
	}
	if !strings.Contains(err.Error(), "on "+dns.Addr()) {
		t.Fatalf("error text %q does not name the resolver dialled, %s", err, dns.Addr())
	}
}
