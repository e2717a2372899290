package egress_test

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// startDNS starts a loopback DNS server owned by the test.
func startDNS(t *testing.T) *dnstest.Server {
	t.Helper()
	s, err := dnstest.Start()
	if err != nil {
		t.Fatalf("dnstest.Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A liveListener accepts TCP connections and counts them; each accepted
// connection is closed at once. A refusal test aims at one of these, never
// at a closed port: a closed port cannot tell a refusal from an outage.
type liveListener struct {
	net.Listener
	accepted atomic.Int64
}

// listenLive starts a liveListener on addr ("127.0.0.2:0" and so on).
func listenLive(t *testing.T, addr string) *liveListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	l := &liveListener{Listener: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return l
}

func (l *liveListener) addrPort() netip.AddrPort {
	return l.Addr().(*net.TCPAddr).AddrPort()
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).AddrPort().Port()
	ln.Close()
	return p
}

// wantRefusal fails t unless err is a Refusal with code and no upstream
// failure.
func wantRefusal(t *testing.T, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want refusal %s", err, code)
	}
	if c, ok := egress.UpstreamCodeOf(err); ok {
		t.Fatalf("refusal %v also reads as upstream failure %s", err, c)
	}
}

// wantUpstream fails t unless err is an UpstreamError with code and no
// refusal.
func wantUpstream(t *testing.T, err error, code egress.UpstreamCode) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want upstream failure %s", err, code)
	}
	if c, ok := checkfu.CodeOf(err); ok {
		t.Fatalf("upstream failure %v also reads as refusal %s", err, c)
	}
}

var loopback1 = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
