package matrix

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"
)

// needNetns skips without root and ip(8), except in CI, where it fails.
func needNetns(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("ip")
	if os.Geteuid() == 0 && err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the namespace topology needs root and ip(8) (euid %d, ip: %v)", os.Geteuid(), err)
	}
	t.Skipf("the namespace topology needs root and ip(8) (euid %d, ip: %v)", os.Geteuid(), err)
}

// TestNSTopology: a listener inside the owned namespace is live from
// the host at its 198.19 address; from inside, the host's loopback is
// not the namespace's; Close leaves no namespace and no interface.
func TestNSTopology(t *testing.T) {
	needNetns(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	top, err := newNSTopology(ctx, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			top.close()
		}
	}()
	if !nsRange.Contains(top.at(3)) || !testRange.Contains(top.at(3)) {
		t.Fatalf("address %s is outside %s", top.at(3), nsRange)
	}
	ln, err := top.listenTCP(netip.AddrPortFrom(top.at(3), 8080).String())
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(top.at(3), 8080).String(), 5*time.Second)
	if err != nil {
		t.Fatalf("the listener inside is not live from the host: %v", err)
	}
	c.Close()
	if from := <-accepted; from[:len(top.at(nsTopoHost).String())] != top.at(nsTopoHost).String() {
		t.Errorf("the contact came from %s, want the host end %s", from, top.at(nsTopoHost))
	}
	// The host's loopback listener is not reachable from inside.
	hostLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostLn.Close()
	if err := top.inside(func() error {
		c, err := net.DialTimeout("tcp", hostLn.Addr().String(), 2*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}); err == nil {
		t.Errorf("the host's loopback listener %s is reachable from inside the namespace", hostLn.Addr())
	}
	name, hostIf := top.name, top.hostIf
	closed = true
	if err := top.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/netns/" + name); err == nil {
		t.Errorf("namespace %s left behind", name)
	}
	if _, err := net.InterfaceByName(hostIf); err == nil {
		t.Errorf("interface %s left behind", hostIf)
	}
}
