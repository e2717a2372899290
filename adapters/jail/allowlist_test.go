//go:build linux

package jail_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// allowlistRig is an upstream HTTP server on the host's loopback that
// counts its requests, an owned DNS server naming it allowed.test and
// denied.test, and a provider whose guard resolves through that server
// and treats 127.0.0.1 as public (the stand-in for the internet).
type allowlistRig struct {
	p    *jail.Provider
	port uint16
	hits atomic.Int32
	// deniedHits counts the requests the upstream saw naming
	// denied.test in their Host: none may arrive.
	deniedHits atomic.Int32
}

func newAllowlistRig(t *testing.T) *allowlistRig {
	t.Helper()
	rig := &allowlistRig{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.hits.Add(1)
		if strings.HasPrefix(r.Host, "denied.test") {
			rig.deniedHits.Add(1)
		}
		w.Write([]byte("upstream"))
	}))
	t.Cleanup(up.Close)
	rig.port = uint16(up.Listener.Addr().(*net.TCPAddr).Port)
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	lo := netip.MustParseAddr("127.0.0.1")
	dns.Set("allowed.test", lo)
	dns.Set("denied.test", lo)
	rig.p = newProvider(t, jail.Config{Guard: jail.LocalGuard(jail.GuardOptions{
		Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})})
	return rig
}

func (rig *allowlistRig) instance(t *testing.T) adapters.Instance {
	t.Helper()
	s := rig.p.Spec("allowlist", testDigest)
	s.NetworkMode = "allowlist"
	s.AllowedHosts = []egress.HostPort{{Host: "allowed.test", Port: rig.port}}
	inst, err := jail.CreateForTest(t, rig.p, s, "")
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestAllowlistThroughTheGuard: through the relay, the allowlisted host
// answers and the upstream counts it; another name for the same live
// listener is refused by the guard and never reaches it.
func TestAllowlistThroughTheGuard(t *testing.T) {
	rig := newAllowlistRig(t)
	inst := rig.instance(t)
	port := strconv.Itoa(int(rig.port))
	if ok, msg := runIn(t, inst, []string{probePath, escapeArg, "http", "http://allowed.test:" + port + "/"}); !ok || msg != "200 upstream" {
		t.Fatalf("allowlisted host through the guard: %t %q, want 200 upstream", ok, msg)
	}
	if rig.hits.Load() != 1 {
		t.Fatalf("upstream counted %d requests, want 1", rig.hits.Load())
	}
	if ok, msg := runIn(t, inst, []string{probePath, escapeArg, "http", "http://denied.test:" + port + "/"}); ok || msg != "403 host_not_allowed" {
		t.Errorf("a host the policy does not list: %t %q, want 403 host_not_allowed", ok, msg)
	}
	if rig.hits.Load() != 1 {
		t.Errorf("the refused request reached the upstream (%d requests)", rig.hits.Load())
	}
}

// TestAllowlistIgnoringTheProxy: a workload that ignores the proxy
// variables reaches no host listener, on loopback or on any host
// address, over TCP or UDP: the relay is its only way out.
func TestAllowlistIgnoringTheProxy(t *testing.T) {
	rig := newAllowlistRig(t)
	inst := rig.instance(t)
	var targets []string
	var counts []*atomic.Int32
	for _, a := range hostAddrs(t) {
		addr, n := liveTCP(t, a)
		targets, counts = append(targets, addr), append(counts, n)
	}
	targets = append(targets, "127.0.0.1:"+strconv.Itoa(int(rig.port)))
	if ok, msg := runIn(t, inst, append([]string{probePath, escapeArg, "tcp"}, targets...)); ok {
		t.Errorf("allowlist, no proxy: %s", msg)
	}
	for i, n := range counts {
		if n.Load() != 0 {
			t.Errorf("listener %s accepted %d connections from the jail", targets[i], n.Load())
		}
	}
	if rig.hits.Load() != 0 {
		t.Errorf("the upstream was reached directly")
	}
	// The control: the relay itself is reachable.
	if ok, msg := runIn(t, inst, []string{probePath, escapeArg, "tcp", "127.0.0.1:" + strconv.Itoa(jail.RelayPort)}); !ok {
		t.Errorf("control: the relay is not reachable: %s", msg)
	}
}

// TestLocalGuardAddr: the guard's own listener binds the asked loopback
// port, and an address beyond loopback, or no address at all, is
// refused as config.
func TestLocalGuardAddr(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sock, stop, err := jail.LocalGuard(jail.GuardOptions{Addr: addr})(context.Background(), []egress.HostPort{{Host: "allowed.test", Port: 80}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if sock == "" {
		t.Fatal("no socket")
	}
	if c, err := net.Dial("tcp4", addr); err != nil {
		t.Errorf("the guard does not listen on %s: %v", addr, err)
	} else {
		c.Close()
	}
	for _, bad := range []string{"198.18.0.1:3128", "0.0.0.0:3128", "localhost:3128", "127.0.0.1"} {
		if _, _, err := jail.LocalGuard(jail.GuardOptions{Addr: bad})(context.Background(), []egress.HostPort{{Host: "allowed.test", Port: 80}}); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("guard address %q: %v, want config_invalid", bad, err)
		}
	}
}
