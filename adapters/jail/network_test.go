//go:build linux

package jail_test

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/jail"
)

// hostAddrs returns 127.0.0.1 and every address of the host's
// interfaces that a socket can bind (link-local IPv6 left out: it needs
// a zone).
func hostAddrs(t *testing.T) []netip.Addr {
	t.Helper()
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifas {
		p, err := netip.ParsePrefix(a.String())
		if err != nil || p.Addr().IsLinkLocalUnicast() || p.Addr() == addrs[0] {
			continue
		}
		addrs = append(addrs, p.Addr())
	}
	return addrs
}

// liveTCP listens on addr and counts what it accepts; the test dials it
// once itself so a refusal seen from the jail is the jail's, not a dead
// listener's.
func liveTCP(t *testing.T, addr netip.Addr) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatalf("control: the host cannot reach its own listener %s: %v", ln.Addr(), err)
	}
	c.Close()
	for deadline := time.Now().Add(time.Second); n.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n.Load() != 1 {
		t.Fatalf("control: listener %s did not count the host's own connection", ln.Addr())
	}
	n.Store(0)
	return ln.Addr().String(), &n
}

func TestNetworkNoneTCP(t *testing.T) {
	p := newProvider(t, jail.Config{})
	var targets []string
	var counts []*atomic.Int32
	for _, a := range hostAddrs(t) {
		addr, n := liveTCP(t, a)
		targets, counts = append(targets, addr), append(counts, n)
	}
	if ok, msg := escape(t, p, "tcp", targets...); ok {
		t.Errorf("network none: %s", msg)
	}
	for i, n := range counts {
		if n.Load() != 0 {
			t.Errorf("network none: listener %s accepted %d connections from the jail", targets[i], n.Load())
		}
	}
}

func TestNetworkNoneUDP(t *testing.T) {
	p := newProvider(t, jail.Config{})
	var targets []string
	var got atomic.Int32
	for _, a := range hostAddrs(t) {
		c, err := net.ListenPacket("udp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 64)
			for {
				n, _, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				if string(buf[:n]) == "checkfu-jail-udp" {
					got.Add(1)
				}
			}
		}()
		targets = append(targets, c.LocalAddr().String())
	}
	// Control: a datagram from the host arrives.
	if s, err := net.Dial("udp", targets[0]); err == nil {
		s.Write([]byte("checkfu-jail-udp"))
		s.Close()
	}
	for deadline := time.Now().Add(time.Second); got.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got.Load() != 1 {
		t.Fatal("control: the host's own datagram did not arrive")
	}
	escape(t, p, "udp", targets...)
	time.Sleep(200 * time.Millisecond)
	if n := got.Load() - 1; n != 0 {
		t.Errorf("network none: %d datagrams from the jail arrived", n)
	}
}

func TestNetworkNoneRawSockets(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "raw"); ok {
		t.Errorf("network none: %s", msg)
	}
}

func TestNetworkNoneUnixSockets(t *testing.T) {
	dir, err := os.MkdirTemp("", "checkfu-jail-unix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	path := filepath.Join(dir, "host.sock")
	abstract := "@checkfu-jail-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var accepted atomic.Int32
	for _, a := range []string{path, abstract} {
		ln, err := net.Listen("unix", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		if c, err := net.Dial("unix", a); err != nil {
			t.Fatalf("control: the host cannot reach %s: %v", a, err)
		} else {
			c.Close()
		}
	}
	os.Chmod(path, 0o777)
	p := newProvider(t, jail.Config{})
	base := accepted.Load()
	if ok, msg := escape(t, p, "unix", path, abstract); ok {
		t.Errorf("network none: %s", msg)
	}
	if accepted.Load() != base {
		t.Errorf("network none: the host's Unix sockets accepted %d connections from the jail", accepted.Load()-base)
	}
}
