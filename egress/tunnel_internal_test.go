package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
)

// A tunnelRig is a guard in front of one destination on 127.0.0.1 that
// the test owns, reached as a literal (no DNS).
type tunnelRig struct {
	g      *Guard
	proxy  string // the guard's "host:port"
	target string // the destination's "host:port"
	open   atomic.Int64
	// hold, when set, makes the destination keep every connection open
	// and silent until the peer closes it; otherwise it closes at once.
	hold bool
	done chan struct{} // closed when the test ends
}

// newTunnelRig starts a guard configured by cfg (Policy and Listener are
// filled in) and a destination. hold says whether the destination stays
// silent and open (true) or closes every connection at once.
func newTunnelRig(t *testing.T, hold bool, cfg GuardConfig) *tunnelRig {
	t.Helper()
	rig := &tunnelRig{hold: hold, done: make(chan struct{})}
	dst, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := dst.Accept()
			if err != nil {
				return
			}
			if !rig.hold {
				c.Close()
				continue
			}
			rig.open.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Never writes, and never closes before the test ends:
				// the guard alone must release the tunnel. open counts
				// the connections whose guard side has not ended.
				io.Copy(io.Discard, c)
				rig.open.Add(-1)
				<-rig.done
				c.Close()
			}()
		}
	}()
	rig.target = dst.Addr().String()
	t.Cleanup(func() {
		dst.Close()
		close(rig.done)
		wg.Wait()
	})
	rig.g, rig.proxy = startGuard(t, cfg)
	return rig
}

// startGuard starts a guard configured by cfg, with an unrestricted
// policy, 127.0.0.1 treated as public and a discarding logger, and
// returns it with its "host:port". The test's cleanup shuts it down.
func startGuard(t *testing.T, cfg GuardConfig) (*Guard, string) {
	t.Helper()
	p, err := ParseNetworkPolicy([]byte(`{"type":"unrestricted"}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy, err = p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = ln
	cfg.TreatAsPublicForTesting = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := NewGuard(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve() }()
	t.Cleanup(func() {
		g.Shutdown(context.Background())
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v", err)
		}
	})
	return g, ln.Addr().String()
}

// dial opens a tunnel from source (a loopback address; "" for 127.0.0.1)
// and returns the workload's end and the guard's status and refusal code.
func (rig *tunnelRig) dial(t *testing.T, source string) (net.Conn, int, string) {
	t.Helper()
	d := net.Dialer{}
	if source != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(source)}
	}
	c, err := d.Dial("tcp", rig.proxy)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", rig.target, rig.target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		t.Fatalf("CONNECT: %v", err)
	}
	return c, resp.StatusCode, resp.Header.Get(RefusalHeader)
}

// tunnels returns how many connections the guard holds for tunnels.
func (g *Guard) tunnelConns() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.tunnels)
}

// eventually polls cond every 10 ms for up to 3 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestGuardReleasesTunnelsWhenWorkloadCloses is issue 11's repro: tunnels
// to a destination that never reads or writes were held forever after the
// workload closed its ends. With a grace of 100 ms, all are released.
func TestGuardReleasesTunnelsWhenWorkloadCloses(t *testing.T) {
	rig := newTunnelRig(t, true, GuardConfig{TunnelCloseGrace: 100 * time.Millisecond})
	var conns []net.Conn
	for range 20 {
		c, status, code := rig.dial(t, "")
		if status != http.StatusOK {
			t.Fatalf("CONNECT = %d %s", status, code)
		}
		conns = append(conns, c)
	}
	if !eventually(func() bool { return rig.open.Load() == 20 }) {
		t.Fatalf("destination holds %d connections, want 20", rig.open.Load())
	}
	for _, c := range conns {
		c.Close()
	}
	if !eventually(func() bool { return rig.open.Load() == 0 && rig.g.tunnelConns() == 0 }) {
		t.Fatalf("after the workload closed: destination holds %d, guard holds %d connections, want 0",
			rig.open.Load(), rig.g.tunnelConns())
	}
}

// TestGuardReleasesTunnelsWhenDestinationCloses: the destination closes,
// the workload keeps its end open and silent; the guard closes both ends
// after the grace.
func TestGuardReleasesTunnelsWhenDestinationCloses(t *testing.T) {
	rig := newTunnelRig(t, false, GuardConfig{TunnelCloseGrace: 100 * time.Millisecond})
	c, status, code := rig.dial(t, "")
	if status != http.StatusOK {
		t.Fatalf("CONNECT = %d %s", status, code)
	}
	defer c.Close()
	if !eventually(func() bool { return rig.g.tunnelConns() == 0 }) {
		t.Fatalf("guard holds %d connections after the destination closed, want 0", rig.g.tunnelConns())
	}
}

// TestGuardClosesIdleTunnels: neither side closes; the idle timeout ends
// the tunnel, at once and not after the close grace, while a tunnel
// carrying bytes in one direction only stays open past it.
//
// The idle tunnel carries one byte from the workload first, so its two
// directions go idle at different times: the destination's direction,
// which saw the byte go the other way, is still waiting when the
// workload's direction ends idle, and only the idle ending's own close
// (not the grace, an hour here) can end it in time.
func TestGuardClosesIdleTunnels(t *testing.T) {
	rig := newTunnelRig(t, true, GuardConfig{TunnelIdleTimeout: 200 * time.Millisecond, TunnelCloseGrace: time.Hour})
	idle, status, _ := rig.dial(t, "")
	if status != http.StatusOK {
		t.Fatalf("CONNECT = %d", status)
	}
	defer idle.Close()
	if _, err := idle.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	busy, status, _ := rig.dial(t, "")
	if status != http.StatusOK {
		t.Fatalf("CONNECT = %d", status)
	}
	defer busy.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				busy.Write([]byte("x"))
			}
		}
	}()
	if !eventually(func() bool { return rig.g.tunnelConns() == 2 }) {
		t.Fatalf("guard holds %d connections, want 2 (only the busy tunnel)", rig.g.tunnelConns())
	}
	idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	var ne net.Error
	if _, err := idle.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("idle tunnel read = %v, want it closed by the guard", err)
	}
	if n := rig.g.tunnelConns(); n != 2 {
		t.Fatalf("guard holds %d connections, want the busy tunnel's 2", n)
	}
	// The busy tunnel's silent direction is not ended by the idle timeout
	// while the other direction moves.
	busy.SetReadDeadline(time.Now().Add(400 * time.Millisecond))
	if _, err := busy.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("busy tunnel read = %v, want this test's own read timeout", err)
	}
}

// TestGuardCapsTunnels: beyond MaxTunnelsPerSource for one source, and
// beyond MaxTunnels for the guard, a CONNECT is refused before anything
// is dialled; a released slot is usable again.
func TestGuardCapsTunnels(t *testing.T) {
	rig := newTunnelRig(t, true, GuardConfig{MaxTunnels: 3, MaxTunnelsPerSource: 2, TunnelCloseGrace: 50 * time.Millisecond})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	want := func(source string, status int, code string) net.Conn {
		t.Helper()
		c, got, gotCode := rig.dial(t, source)
		if got != status || gotCode != code {
			c.Close()
			t.Fatalf("CONNECT from %s = %d %q, want %d %q", source, got, gotCode, status, code)
		}
		if status != http.StatusOK {
			c.Close()
			return nil
		}
		held = append(held, c)
		return c
	}
	first := want("127.0.0.1", http.StatusOK, "")
	want("127.0.0.1", http.StatusOK, "")
	want("127.0.0.1", http.StatusForbidden, string(CodeTunnelLimitReached)) // per source
	want("127.0.0.3", http.StatusOK, "")
	want("127.0.0.4", http.StatusForbidden, string(CodeTunnelLimitReached)) // per guard
	if !eventually(func() bool { return rig.open.Load() == 3 }) {
		t.Fatalf("destination holds %d connections, want 3 (a refused CONNECT dials nothing)", rig.open.Load())
	}
	first.Close()
	if !eventually(func() bool { return rig.g.tunnelConns() == 4 }) {
		t.Fatalf("guard holds %d connections, want 4", rig.g.tunnelConns())
	}
	want("127.0.0.4", http.StatusOK, "")
}

// TestNewGuardRefusesNegativeTunnelBounds: a negative bound is a
// configuration error, not "unbounded".
func TestNewGuardRefusesNegativeTunnelBounds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, _ := ParseNetworkPolicy([]byte(`{"type":"unrestricted"}`))
	cp, _ := p.Compile(nil)
	for i, cfg := range []GuardConfig{{MaxTunnels: -1}, {MaxTunnelsPerSource: -1}, {TunnelIdleTimeout: -1}, {TunnelCloseGrace: -1}, {MaxIdleConnections: -1}, {TunnelIdleAfter: -1}} {
		cfg.Policy, cfg.Listener = cp, ln
		if _, err := NewGuard(cfg); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("config %d: NewGuard = %v, want %s", i, err, checkfu.CodeConfigInvalid)
		}
	}
}

// TestGuardRefusesOptionsStar: net/http's server answers "OPTIONS *"
// with 200 by itself unless told not to, whatever the handler; the guard
// refuses it as it refuses every target that is not absolute-form or
// CONNECT, before any policy is consulted.
func TestGuardRefusesOptionsStar(t *testing.T) {
	_, proxy := startGuard(t, GuardConfig{})
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodOptions})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(RefusalHeader) != string(CodeRequestInvalid) {
		t.Fatalf("OPTIONS * = %d %q, want 403 %s", resp.StatusCode, resp.Header.Get(RefusalHeader), CodeRequestInvalid)
	}
}
