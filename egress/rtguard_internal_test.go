package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The tests of this file are the attacks of the wt-rtguard red-team pass
// (docs/changes/wt-rtguard.md): a hijacked workload that can only talk
// to the guard, and where said a hostile destination. Everything runs
// on loopback.

// headerOfSize returns a request to a loopback literal (refused by the
// guard's dialer without a dial, so any answer is the guard's own) whose
// request line and header are exactly n bytes.
func headerOfSize(t *testing.T, n int) string {
	t.Helper()
	head := "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "
	tail := "\r\n\r\n"
	pad := n - len(head) - len(tail)
	if pad < 1 {
		t.Fatalf("a header of %d bytes is too short to pad", n)
	}
	return head + strings.Repeat("a", pad) + tail
}

// statusOf sends req on a new connection to addr and returns the status
// code of the answer.
func statusOf(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGuardBoundsRequestHeader: a workload's request line and header are
// read up to MaxRequestHeaderBytes, exactly; one byte more is answered
// 431 and never parsed. Before, net/http's default let every held
// connection make the guard buffer 1 MiB and 4 KiB of header, 2 GiB
// over DefaultMaxConnections connections trickling headers within
// HeaderTimeout.
func TestGuardBoundsRequestHeader(t *testing.T) {
	if MaxRequestHeaderBytes != 64<<10 {
		t.Errorf("MaxRequestHeaderBytes = %d; the documented bound is 64 KiB", MaxRequestHeaderBytes)
	}
	g, addr := newHeaderGuard(t)
	go g.Serve()
	if got := statusOf(t, addr, headerOfSize(t, MaxRequestHeaderBytes)); got != http.StatusForbidden {
		t.Errorf("a header of MaxRequestHeaderBytes: status %d, want the guard's 403 (destination_not_public)", got)
	}
	if got := statusOf(t, addr, headerOfSize(t, MaxRequestHeaderBytes+1)); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a header of MaxRequestHeaderBytes+1: status %d, want 431", got)
	}
}

// idleGuard starts a guard whose idle bound is short, for the stall
// attacks below.
func idleGuard(t *testing.T, idle time.Duration) (*Guard, string) {
	t.Helper()
	return startGuard(t, GuardConfig{TunnelIdleTimeout: idle})
}

// waitConnsZero waits up to limit for the guard to hold no workload
// connection, and reports how long that took.
func waitConnsZero(t *testing.T, g *Guard, limit time.Duration) (time.Duration, bool) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if g.conns.Load() == 0 {
			return time.Since(start), true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), false
}

// TestGuardCutsAStalledRequestBody: a workload that announces a body and
// then sends nothing more holds its connection, and an upstream
// connection, only until TunnelIdleTimeout passes without a byte.
// Before, it held both for ever: the server has no read timeout, the
// exchange was not idle (so never reclaimed) and the upstream deadline
// does not cover reading the workload.
func TestGuardCutsAStalledRequestBody(t *testing.T) {
	const idle = 300 * time.Millisecond
	o := startRawOrigin(t, func(c net.Conn, _, _ int64) bool { writeResponse(c, "ok"); return true })
	g, proxy := idleGuard(t, idle)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// start is taken before the request is sent: the guard may arm its
	// idle bound before this goroutine runs again after the write.
	start := time.Now()
	fmt.Fprintf(c, "POST http://%s/ HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\nabc", o.addr, o.addr)
	c.SetReadDeadline(time.Now().Add(20 * idle))
	_, err = io.Copy(io.Discard, c)
	took := time.Since(start)
	if isTimeout(err) {
		t.Fatalf("a stalled request body still held after %v (idle bound %v)", took, idle)
	}
	if took < idle {
		t.Errorf("a stalled request body cut after %v, before the idle bound %v", took, idle)
	}
	if d, ok := waitConnsZero(t, g, 10*idle); !ok {
		t.Errorf("the guard still holds %d connections %v later", g.conns.Load(), d)
	}
}

// TestGuardCutsAnUnreadResponse: a workload that sends a request and
// never reads the answer (the destination streams one without end)
// holds its connection only until a write has waited TunnelIdleTimeout.
// Before, the guard's write blocked for ever.
func TestGuardCutsAnUnreadResponse(t *testing.T) {
	const idle = 300 * time.Millisecond
	chunk := strings.Repeat("x", 32<<10)
	upstreamCut := make(chan struct{})
	o := startRawOrigin(t, func(c net.Conn, _, _ int64) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
		for {
			c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(c, chunk); err != nil {
				close(upstreamCut)
				return false
			}
		}
	})
	g, proxy := idleGuard(t, idle)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4 << 10)
	}
	fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", o.addr, o.addr)
	select {
	case <-upstreamCut:
	case <-time.After(30 * idle):
		t.Fatalf("a response the workload does not read still held after %v (idle bound %v)", 30*idle, idle)
	}
	if d, ok := waitConnsZero(t, g, 10*idle); !ok {
		t.Errorf("the guard still holds %d connections %v later", g.conns.Load(), d)
	}
}

// TestGuardCutsAStalledResponseBody: a hostile destination that sends a
// header and part of the body it announced, then nothing, holds the
// workload's connection only until TunnelIdleTimeout passes without a
// byte; the workload sees a cut connection, not a clean end. Before,
// the guard waited for ever.
func TestGuardCutsAStalledResponseBody(t *testing.T) {
	const idle = 300 * time.Millisecond
	hold := make(chan struct{})
	o := startRawOrigin(t, func(c net.Conn, _, _ int64) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
		<-hold
		return false
	})
	t.Cleanup(func() { close(hold) }) // before the origin's own cleanup waits for it
	g, proxy := idleGuard(t, idle)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now() // before the request: see TestGuardCutsAStalledRequestBody
	fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", o.addr, o.addr)
	c.SetReadDeadline(time.Now().Add(20 * idle))
	got, err := io.ReadAll(c)
	took := time.Since(start)
	if isTimeout(err) {
		t.Fatalf("a stalled response body still held after %v (idle bound %v)", took, idle)
	}
	if took < idle {
		t.Errorf("a stalled response body cut after %v, before the idle bound %v", took, idle)
	}
	if resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil); err == nil {
		if b, err := io.ReadAll(resp.Body); err == nil {
			t.Errorf("a stalled response body reached the workload as a clean end (%q); want a cut connection", b)
		}
	}
	if d, ok := waitConnsZero(t, g, 10*idle); !ok {
		t.Errorf("the guard still holds %d connections %v later", g.conns.Load(), d)
	}
}

// TestGuardIdleBoundSparesHealthyExchanges: the idle bound of a
// forwarded exchange cuts only silence. A destination that answers a
// request body later than TunnelIdleTimeout is still relayed (the
// workload's connection carries no read deadline once its body has
// ended), and a keep-alive connection's next requests, sent later than
// TunnelIdleTimeout after the previous answer, are answered (net/http
// clears the write deadline an answer leaves).
func TestGuardIdleBoundSparesHealthyExchanges(t *testing.T) {
	const idle = 300 * time.Millisecond
	o := startRawOrigin(t, func(c net.Conn, _, k int64) bool {
		if k == 1 {
			time.Sleep(3 * idle)
		}
		writeResponse(c, "ok")
		return true
	})
	_, proxy := idleGuard(t, idle)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i, tc := range []struct {
		req    string
		status int
	}{
		{fmt.Sprintf("POST http://%s/ HTTP/1.1\r\nHost: %s\r\nContent-Length: 3\r\n\r\nabc", o.addr, o.addr), http.StatusOK},
		// The guard's own answer: no forwarded body resets the deadline.
		{"GET http://127.0.0.2/ HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n", http.StatusForbidden},
		{fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", o.addr, o.addr), http.StatusOK},
	} {
		if i > 0 {
			time.Sleep(3 * idle)
		}
		c.SetDeadline(time.Now().Add(20 * idle))
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		_, err = io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || err != nil {
			t.Fatalf("request %d: %d, %v; want %d", i+1, resp.StatusCode, err, tc.status)
		}
	}
}

// TestGuardAllowlistSpellings: on the allowlist, no spelling of a
// destination reaches anything but a listed host:port, in absolute form
// or CONNECT: IP literals in every spelling (decimal, octal, hex,
// shortened, IPv4-mapped and -compatible IPv6, NAT64, zoned, the
// metadata, unique-local, unspecified and benchmarking addresses), other
// names, suffixes, escapes, ports that wrap or carry a sign or a leading
// zero, and a Host header that disagrees with the URL. Each is refused
// with a typed code and dials nothing (or is refused by net/http before
// the guard sees it); the spellings of the listed host (case, one
// trailing dot, full-width letters, explicit default port) dial exactly
// the canonical host:port.
func TestGuardAllowlistSpellings(t *testing.T) {
	g, rec := newRecordingGuard(t, `{"type":"allowlist","allowed_hosts":["api.example.com:80","api.example.com:443"]}`)
	denied := []string{
		"127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "017700000001",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[fe80::1%25eth0]",
		"169.254.169.254", "[::ffff:169.254.169.254]", "[fd00::1]", "[fd00:ec2::254]", "0.0.0.0", "0", "[::]",
		"198.18.0.1", "api.example.com.evil.example", "evil.example", "api.example.com..", "xn--pi-7ka.example.com",
		"api%2eexample.com", "api.example.com%2eevil.example", "sub.api.example.com", "example.com", "api-example.com",
	}
	ports := map[string]string{"http": "80", "connect": "443"}
	for _, host := range denied {
		for _, form := range []string{"http", "connect"} {
			for _, target := range []string{host, host + ":" + ports[form], host + ":8080"} {
				if form == "connect" && target == host {
					continue // CONNECT without a port: TestGuardRefusesMalformedTargets
				}
				spellingDials(t, g, rec, form, target, "api.example.com", "")
			}
		}
	}
	for _, target := range []string{
		"api.example.com:8080", "api.example.com:0443", "api.example.com:+443", "api.example.com:65616",
		"api.example.com:4294967376", "api.example.com:-1", "api.example.com:443 ", "api.example.com:0x1bb",
	} {
		spellingDials(t, g, rec, "http", target, "api.example.com", "")
		spellingDials(t, g, rec, "connect", target, "api.example.com", "")
	}
	// A Host header naming the listed host under a URL that does not.
	spellingDials(t, g, rec, "http", "evil.example", "api.example.com", "")
	for _, tc := range [][2]string{
		{"API.EXAMPLE.COM", "api.example.com:80"}, {"api.example.com.", "api.example.com:80"},
		{"ａｐｉ.example.com", "api.example.com:80"}, {"api.example.com:80", "api.example.com:80"},
	} {
		spellingDials(t, g, rec, "http", tc[0], "evil.example", tc[1])
	}
	for _, tc := range [][2]string{
		{"API.example.COM:443", "api.example.com:443"}, {"api.example.com.:443", "api.example.com:443"},
	} {
		spellingDials(t, g, rec, "connect", tc[0], tc[0], tc[1])
	}
}

// spellingDials sends one request for target (form "http": absolute
// form, with hostHeader as Host; "connect": CONNECT) through g and checks
// that it dials want, or nothing with a typed refusal when want is "".
func spellingDials(t *testing.T, g *Guard, rec *recorder, form, target, hostHeader, want string) {
	t.Helper()
	raw := "GET http://" + target + "/ HTTP/1.1\r\nHost: " + hostHeader + "\r\n\r\n"
	if form == "connect" {
		raw = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
	}
	rec.mu.Lock()
	rec.dialed, rec.hosts = nil, nil
	rec.mu.Unlock()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		if want != "" {
			t.Errorf("%s %q: net/http refused it (%v); want it to dial %s", form, target, err, want)
		}
		return // net/http answers 400 itself; the guard never sees it
	}
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	rec.mu.Lock()
	dialed := rec.dialed
	rec.mu.Unlock()
	if want == "" {
		if len(dialed) != 0 || w.Code != http.StatusForbidden || w.Header().Get(RefusalHeader) == "" {
			t.Errorf("%s %q (Host %q): %d %q, dialled %v; want a typed 403 and no dial", form, target, hostHeader, w.Code, w.Header().Get(RefusalHeader), dialed)
		}
		return
	}
	if len(dialed) != 1 || dialed[0] != want {
		t.Errorf("%s %q: dialled %v, want [%s] (answer %d %q)", form, target, dialed, want, w.Code, w.Header().Get(RefusalHeader))
	}
}

// TestGuardSmuggling: a workload's request whose framing is ambiguous
// (two Host headers, two Content-Lengths, Content-Length with
// Transfer-Encoding hiding a second request, an obs-folded or bare-LF
// header, a Transfer-Encoding other than chunked) reaches no destination
// but the listed one: net/http answers it 400 or 501 itself, or the
// guard decides each request it reads, and re-frames the one it forwards,
// so the destination sees one request for the listed host, never the
// hidden one.
func TestGuardSmuggling(t *testing.T) {
	g, rec := newRecordingGuard(t, `{"type":"allowlist","allowed_hosts":["api.example.com:80"]}`)
	go g.Serve()
	t.Cleanup(func() { g.Shutdown(context.Background()) })
	hidden := "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n"
	for _, raw := range []string{
		"GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nHost: evil.example\r\n\r\n",
		"POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 3\r\nContent-Length: 61\r\n\r\nabc" + hidden,
		fmt.Sprintf("POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s", 5+len(hidden), hidden),
		fmt.Sprintf("POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n0\r\n\r\n%s", 5+len(hidden), hidden),
		"POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n" + hidden,
		"POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 61\r\n\r\n0\r\n\r\n" + hidden,
		"GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nX-A: a\r\n Host: evil.example\r\n\r\n",
		"GET http://api.example.com/ HTTP/1.1\nHost: api.example.com\nX-A: a\n\n",
		"GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\nHost: evil.example\r\n\r\n",
	} {
		c, err := net.Dial("tcp", g.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// The recording destination answers at once: what has not
		// come within the deadline will not come.
		c.SetDeadline(time.Now().Add(time.Second))
		io.WriteString(c, raw)
		io.Copy(io.Discard, c)
		c.Close()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, d := range rec.dialed {
		if d != "api.example.com:80" {
			t.Errorf("dialled %q", d)
		}
	}
	for _, h := range rec.hosts {
		if h != "api.example.com" {
			t.Errorf("the destination read a request for Host %q", h)
		}
	}
	if len(rec.hosts) == 0 {
		t.Errorf("no request reached the destination; the test shows nothing")
	}
}

// lineCounter counts the log lines written to it, keeps the last, and
// sums the unlogged_before counts they carry.
type lineCounter struct {
	mu       sync.Mutex
	lines    int
	last     string
	unlogged int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines += strings.Count(string(p), "\n")
	l.last = string(p)
	if _, after, ok := strings.Cut(string(p), "unlogged_before="); ok {
		n, _ := strconv.Atoi(strings.TrimRight(after, "\n"))
		l.unlogged += n
	}
	return len(p), nil
}

// TestGuardBoundsRefusalLog: a workload looping on refused requests
// makes the guard write at most RefusalLogsPerSecond refusal lines a
// second after a burst of as many; every refusal is counted
// (MetricGuardRefusals), and the next line written says how many went
// unlogged. Before, each refusal was a log line: a write amplifier at
// the workload's request rate.
func TestGuardBoundsRefusalLog(t *testing.T) {
	if RefusalLogsPerSecond != 16 {
		t.Errorf("RefusalLogsPerSecond = %d; the documented bound is 16", RefusalLogsPerSecond)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	g, logged := newLoggingGuard(t, mp)
	const flood = 500
	refused := func() {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n")))
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if w.Header().Get(RefusalHeader) != string(CodeHostNotAllowed) {
			t.Fatalf("answer %d %q, want host_not_allowed", w.Code, w.Header().Get(RefusalHeader))
		}
	}
	checkPacedLog(t, logged, flood, refused)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var counted int64 = -1
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == MetricGuardRefusals && len(s.DataPoints) == 1 {
				counted = s.DataPoints[0].Value
			}
		}
	}
	if counted != flood+1 {
		t.Errorf("%s = %d, want %d", MetricGuardRefusals, counted, flood+1)
	}
}

// TestGuardBoundsReclaimLog: a workload that keeps leaving connections
// idle, each closed to free a slot, makes the guard write at most
// RefusalLogsPerSecond of those lines a second after a burst of as
// many, and the next line written says how many went unlogged.
func TestGuardBoundsReclaimLog(t *testing.T) {
	g, logged := newLoggingGuard(t, nil)
	const closed = 500
	reclaim := func() {
		a, b := net.Pipe()
		defer b.Close()
		g.conns.Add(1)
		g.close(&heldConn{Conn: a, g: g})
	}
	checkPacedLog(t, logged, closed, reclaim)
}

// newLoggingGuard returns an allowlist guard for api.example.com whose
// log lines the returned counter counts; mp may be nil.
func newLoggingGuard(t *testing.T, mp metric.MeterProvider) (*Guard, *lineCounter) {
	t.Helper()
	p, err := ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"]}`))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	logged := &lineCounter{}
	g, err := NewGuard(GuardConfig{Policy: pol, Listener: ln, MeterProvider: mp, Logger: slog.New(slog.NewTextHandler(logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return g, logged
}

// checkPacedLog runs event n times, each meant to write one paced log
// line, and checks that at most RefusalLogsPerSecond lines a second
// after a burst of as many were written; then, after a pause, that one
// more event writes exactly one line saying how many went unlogged.
func checkPacedLog(t *testing.T, logged *lineCounter, n int, event func()) {
	t.Helper()
	start := time.Now()
	for range n {
		event()
	}
	elapsed := time.Since(start)
	logged.mu.Lock()
	lines := logged.lines
	logged.mu.Unlock()
	if most := RefusalLogsPerSecond + int(elapsed.Seconds()*RefusalLogsPerSecond) + 1; lines > most || lines < RefusalLogsPerSecond {
		t.Fatalf("%d events in %v wrote %d log lines; want %d to %d", n, elapsed, lines, RefusalLogsPerSecond, most)
	}
	time.Sleep(time.Second / RefusalLogsPerSecond * 2)
	event()
	logged.mu.Lock()
	last, total, unlogged := logged.last, logged.lines, logged.unlogged
	logged.mu.Unlock()
	// Every event is a line or is counted, once, by the next line: with
	// the last line written after the pause, none is left uncounted.
	if total != lines+1 || total+unlogged != n+1 {
		t.Fatalf("%d events wrote %d lines carrying unlogged_before %d in all (last %q); want one line after the pause and lines + unlogged = %d", n+1, total, unlogged, last, n+1)
	}
}
