package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// closedByGuard reports whether the guard closed c: a read ends with
// EOF or a reset, not this test's own deadline (a guard against a hang,
// not a timing assertion).
func closedByGuard(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestGuardReclaimsIdleTunnels is the idle-tunnel exhaustion: tunnels to a
// silent destination that hold every connection (or tunnel) slot. Once
// they are idle, a new CONNECT past the cap closes the longest idle one
// (of its own source, at the per-source cap) and is served in its place;
// while none is idle, it is refused as before.
func TestGuardReclaimsIdleTunnels(t *testing.T) {
	tests := []struct {
		name   string
		cfg    GuardConfig
		held   int
		status int
		code   string
	}{
		{"connection cap, idle", GuardConfig{MaxConnections: 4, MaxIdleConnections: 4, TunnelIdleAfter: time.Nanosecond}, 4, http.StatusOK, ""},
		{"connection cap, busy", GuardConfig{MaxConnections: 4, MaxIdleConnections: 4, TunnelIdleAfter: time.Hour}, 4, http.StatusServiceUnavailable, string(CodeConnectionLimitReached)},
		{"tunnel cap, idle", GuardConfig{MaxTunnels: 3, MaxIdleConnections: 8, TunnelIdleAfter: time.Nanosecond}, 3, http.StatusOK, ""},
		{"per-source cap, idle", GuardConfig{MaxTunnelsPerSource: 2, MaxIdleConnections: 8, TunnelIdleAfter: time.Nanosecond}, 2, http.StatusOK, ""},
		{"per-source cap, busy", GuardConfig{MaxTunnelsPerSource: 2, MaxIdleConnections: 8, TunnelIdleAfter: time.Hour}, 2, http.StatusForbidden, string(CodeTunnelLimitReached)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.TunnelCloseGrace = time.Hour
			rig := newTunnelRig(t, true, tt.cfg)
			// A closed tunnel's goroutine may not give back its slot
			// before the test has looked: only reclaim itself may.
			ending := make(chan struct{})
			hold := func() { <-ending }
			rig.g.tunnelEnding.Store(&hold)
			defer close(ending)
			var held []net.Conn
			for range tt.held {
				c, status, code := rig.dial(t, "")
				if status != http.StatusOK {
					t.Fatalf("CONNECT = %d %s", status, code)
				}
				held = append(held, c)
				defer c.Close()
			}
			c, status, code := rig.dial(t, "")
			defer c.Close()
			if status != tt.status || code != tt.code {
				t.Fatalf("CONNECT past the cap = %d %q, want %d %q", status, code, tt.status, tt.code)
			}
			if status != http.StatusOK {
				return
			}
			if !closedByGuard(held[0]) {
				t.Fatal("the longest idle tunnel is still open")
			}
			// The reclaimed tunnel's goroutine lets go of its two
			// connections once its pipe has seen them closed.
			if !eventually(func() bool { return rig.g.tunnelConns() == 2*tt.held }) {
				t.Fatalf("guard holds %d tunnel connections, want %d", rig.g.tunnelConns(), 2*tt.held)
			}
		})
	}
}

// TestGuardSurvivesTunnelChurn is the churn exhaustion: one workload
// opens tunnels to a silent destination and closes its end at once, so
// every tunnel waits out its close grace holding its slots. A tunnel in
// its grace counts as idle: churning three times the caps is served
// throughout, and the guard never holds more than its caps.
func TestGuardSurvivesTunnelChurn(t *testing.T) {
	const limit = 4
	rig := newTunnelRig(t, true, GuardConfig{MaxConnections: limit, MaxTunnels: limit, MaxIdleConnections: limit, TunnelCloseGrace: time.Hour})
	closing := func() bool {
		rig.g.heldMu.Lock()
		defer rig.g.heldMu.Unlock()
		for c := range rig.g.held {
			if tun := c.tun.Load(); tun == nil || tun.closeAt.Load() == 0 {
				return false
			}
		}
		return true
	}
	for i := range 3 * limit {
		c, status, code := rig.dial(t, "")
		c.Close()
		if status != http.StatusOK {
			t.Fatalf("churn %d: CONNECT = %d %q", i, status, code)
		}
		// The guard sees the close on its own goroutine; the next
		// CONNECT comes once every tunnel held is in its grace.
		if !eventually(closing) {
			t.Fatalf("churn %d: a closed tunnel is not in its grace", i)
		}
		if n := rig.g.conns.Load(); n > limit {
			t.Fatalf("churn %d: guard holds %d connections, over its cap of %d", i, n, limit)
		}
	}
}

// TestGuardTrimsIdleKeepAlives: keep-alive connections between requests
// are idle; past MaxIdleConnections the guard closes the longest idle.
func TestGuardTrimsIdleKeepAlives(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	g, proxy := startGuard(t, GuardConfig{MaxIdleConnections: 1})
	get := func() net.Conn {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s/ HTTP/1.1\r\nHost: %s\r\n\r\n", up.URL, up.Listener.Addr())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET through the guard = %d", resp.StatusCode)
		}
		return c
	}
	first := get()
	defer first.Close()
	// The first is idle, by net/http's word, before the second exists.
	if !eventually(func() bool { return len(g.idleHeld(func(*heldConn) bool { return true })) == 1 }) {
		t.Fatal("a keep-alive connection between requests is not idle")
	}
	second := get()
	defer second.Close()
	if !closedByGuard(first) {
		t.Fatal("two keep-alive connections idle past MaxIdleConnections of 1")
	}
}

// TestGuardIdleCapDefault: MaxIdleConnections left zero is a quarter of
// the connection cap, at least 1; one set is used as it is.
func TestGuardIdleCapDefault(t *testing.T) {
	for _, tt := range []struct{ conns, idle, want int }{
		{8, 0, 8 / IdleShare},
		{IdleShare - 1, 0, 1},
		{8, 7, 7},
	} {
		g, _ := startGuard(t, GuardConfig{MaxConnections: tt.conns, MaxIdleConnections: tt.idle})
		if g.maxIdle != tt.want {
			t.Errorf("MaxConnections %d, MaxIdleConnections %d: idle cap %d, want %d", tt.conns, tt.idle, g.maxIdle, tt.want)
		}
	}
}
