package cutproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
)

// echoServer starts a loopback TCP echo server and returns its address.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != msg {
		t.Fatalf("echo = %q, want %q", got, msg)
	}
}

func TestForwardAndCut(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, "hello")
	if got := p.Forwarded(); got != 10 {
		t.Errorf("Forwarded() = %d, want 10", got)
	}
	if n := p.Cut(); n != 1 {
		t.Errorf("Cut() = %d, want 1", n)
	}
	if _, err := io.ReadAll(c); err != nil && !isReset(err) {
		t.Fatalf("read after cut: %v", err)
	}
	// A new connection after the cut is forwarded normally.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	roundTrip(t, c2, "again")
	if p.Cuts() != 1 || p.Accepted() != 2 {
		t.Errorf("Cuts() = %d, Accepted() = %d, want 1, 2", p.Cuts(), p.Accepted())
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne)
}

func TestCutAfter(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.CutAfter(1000)
	msg := bytes.Repeat([]byte("x"), 4000)
	go c.Write(msg)
	io.Copy(io.Discard, c)
	if got := p.Forwarded(); got != 1000 {
		t.Errorf("Forwarded() = %d through a proxy armed to cut after 1000", got)
	}
	if p.Cuts() != 1 {
		t.Errorf("Cuts() = %d, want 1", p.Cuts())
	}
}

func TestHoldRelease(t *testing.T) {
	p := newProxy(t)
	p.Hold()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	p.Release()
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
		t.Fatalf("after Release read %q, %v; want %q", got, err, "held")
	}
}

func TestHalfClose(t *testing.T) {
	p := newProxy(t)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("tail"))
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "tail" {
		t.Fatalf("after half-close read %q, %v; want %q", got, err, "tail")
	}
}

func TestCloseIdempotent(t *testing.T) {
	p := newProxy(t)
	p.Close()
	if err := p.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
}
