//go:build linux

package jail_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// hangBound bounds a Destroy that must end, against a hung test: far
// above GuardStopGrace and the kill and reaping of a jail, it is no
// timing assertion (a Destroy that waits for the held connections never
// ends).
const hangBound = jail.GuardStopGrace + 20*time.Second

// silentUpstream accepts connections and never answers: each is kept
// for the test to see closed.
type silentUpstream struct {
	ln       net.Listener
	accepted chan net.Conn
	mu       sync.Mutex
	conns    []net.Conn
}

func newSilentUpstream(t *testing.T) *silentUpstream {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &silentUpstream{ln: ln, accepted: make(chan net.Conn, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns = append(u.conns, c)
			u.mu.Unlock()
			u.accepted <- c
		}
	}()
	t.Cleanup(u.close)
	return u
}

func (u *silentUpstream) close() {
	u.ln.Close()
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, c := range u.conns {
		c.Close()
	}
}

// next waits for the upstream's next connection.
func (u *silentUpstream) next(t *testing.T, what string) net.Conn {
	t.Helper()
	select {
	case c := <-u.accepted:
		return c
	case <-time.After(hangBound):
		t.Fatalf("%s: the upstream saw no connection", what)
		return nil
	}
}

// TestDestroyBoundsTheGuardStop: connections that never end (a peer on
// the guard's socket that holds a CONNECT tunnel, one that waits on a
// GET, one that sends nothing, and the jail's own workload waiting on a
// GET through its relay, all to an upstream that never answers) do not
// hold Destroy: the guard's stop waits GuardStopGrace, then closes every
// relayed connection itself. Destroy returns, every peer and every
// upstream connection reads its end, and no goroutine of the relays or
// the guard, nor any descriptor, is left.
func TestDestroyBoundsTheGuardStop(t *testing.T) {
	up := newSilentUpstream(t)
	port := uint16(up.ln.Addr().(*net.TCPAddr).Port)
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("silent.test", netip.MustParseAddr("127.0.0.1"))
	local := jail.LocalGuard(jail.GuardOptions{
		Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	sockets := make(chan string, 1)
	p := newProvider(t, jail.Config{Guard: func(ctx context.Context, hosts []egress.HostPort) (string, func() error, error) {
		sock, stop, err := local(ctx, hosts)
		if err == nil {
			sockets <- sock
		}
		return sock, stop, err
	}})
	target := "silent.test:" + strconv.Itoa(int(port))

	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	s := p.Spec("held-guard", testDigest)
	s.NetworkMode = "allowlist"
	s.AllowedHosts = []egress.HostPort{{Host: "silent.test", Port: port}}
	inst, err := jail.CreateForTest(t, p, s, "")
	if err != nil {
		t.Fatal(err)
	}
	sock := <-sockets

	// The jail's workload waits on the silent upstream through its relay.
	proc, err := inst.OpenProcess(context.Background(), adapters.ProcessSpec{Argv: []string{probePath, escapeArg, "http", "http://" + target + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var upConns []net.Conn
	upConns = append(upConns, up.next(t, "the workload's GET"))

	// Peers on the guard's socket.
	var peers []net.Conn
	defer func() {
		for _, c := range peers {
			c.Close()
		}
	}()
	peer := func(what, send string) net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		peers = append(peers, c)
		if _, err := io.WriteString(c, send); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return c
	}
	tunnel := peer("tunnel", "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	upConns = append(upConns, up.next(t, "the CONNECT"))
	tunnel.SetReadDeadline(time.Now().Add(hangBound))
	if line, err := bufio.NewReader(tunnel).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("control: the CONNECT through the guard: %q, %v", line, err)
	}
	peer("get", "GET http://"+target+"/ HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	upConns = append(upConns, up.next(t, "the peer's GET"))
	peer("silent", "")

	start := time.Now()
	destroyed := make(chan error, 1)
	go func() { destroyed <- inst.Destroy(context.Background()) }()
	select {
	case err := <-destroyed:
		t.Logf("Destroy returned in %v (GuardStopGrace %v)", time.Since(start).Round(time.Millisecond), jail.GuardStopGrace)
		if err != nil {
			t.Errorf("Destroy: %v", err)
		}
	case <-time.After(hangBound):
		t.Errorf("Destroy did not return in %v, GuardStopGrace %v: it waits for the held connections", hangBound, jail.GuardStopGrace)
		for _, c := range peers { // end what it waits for, for the test to end
			c.Close()
		}
		up.close()
		<-destroyed
	}
	proc.Wait()

	for i, c := range peers {
		if _, err := readEnd(c); err != nil {
			t.Errorf("peer %d on the guard's socket after Destroy: %v; want it closed", i, err)
		}
	}
	for i, c := range upConns {
		if _, err := readEnd(c); err != nil {
			t.Errorf("upstream connection %d after Destroy: %v; want it closed", i, err)
		}
	}

	// Nothing left: no goroutine of a relay or of the guard, and no
	// descriptor beyond those the test holds itself (closed now).
	for _, c := range peers {
		c.Close()
	}
	up.close()
	if left := eventually(func() string {
		return strings.Join(goroutinesIn("adapters/jail.(*relay)", "adapters/jail.splice", "egress.(*Guard)"), "\n\n")
	}); left != "" {
		t.Errorf("goroutines left after Destroy (%d before, %d now):\n%s", goroutines, runtime.NumGoroutine(), left)
	}
	if left := eventually(func() string {
		// Splicing copies keep pipes in a pool that the collector
		// empties: those are the runtime's, not the relay's.
		runtime.GC()
		if n := openFDs(t); n > fds {
			return strconv.Itoa(n-fds) + " more descriptors than before Create: " + fdLinks()
		}
		return ""
	}); left != "" {
		t.Error(left)
	}
}

// readEnd reads c to its end, within hangBound, and returns what it read
// and a timeout if c stayed open. A reset is an end.
func readEnd(c net.Conn) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(hangBound))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return b, err
	}
	return b, nil
}

// eventually polls check, for up to hangBound, until it reports nothing;
// it returns the last report.
func eventually(check func() string) string {
	deadline := time.Now().Add(hangBound)
	for {
		r := check()
		if r == "" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutinesIn returns the stacks of this process's goroutines that run
// any of funcs.
func goroutinesIn(funcs ...string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func fdLinks() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"->"+l)
	}
	return strings.Join(out, " ")
}
