package egress

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/refusalbudget"
)

// Response headers the guard sets on the answers it makes itself.
const (
	// RefusalHeader carries the code of a refusal; the status is 403.
	RefusalHeader = "Checkfu-Refusal"
	// UpstreamFailureHeader carries the code of an upstream failure
	// ([UpstreamCode]); the status is 502.
	UpstreamFailureHeader = "Checkfu-Upstream-Failure"
)

// GuardConfig configures [NewGuard].
type GuardConfig struct {
	// Policy is the compiled network policy to enforce. Required.
	Policy *CompiledPolicy
	// Listener is where the guard serves. Required: its address is
	// never dialled, so the guard cannot loop into itself.
	Listener net.Listener
	// Resolver is the "ip:port" of the DNS server to use; empty means
	// the system resolver (see [DialerConfig]).
	Resolver string
	// TreatAsPublicForTesting marks test-topology blocks as public (see
	// [DialerConfig]); each is logged at Warn level.
	TreatAsPublicForTesting []netip.Prefix
	// Logger receives one line per refusal and upstream failure. Nil
	// means slog.Default().
	Logger *slog.Logger
	// MeterProvider gives the guard's gauges (MetricGuardTunnels and
	// the others: tunnels and connections held, and their bounds),
	// observed when a reader collects. Nil records nothing.
	MeterProvider metric.MeterProvider

	// TunnelCloseGrace is how long a CONNECT tunnel stays open after one
	// direction has ended (its sender closed or half-closed): the other
	// direction may finish within it, then both ends are closed. Zero
	// means DefaultTunnelCloseGrace.
	TunnelCloseGrace time.Duration
	// TunnelIdleTimeout closes a tunnel through which no byte has moved,
	// in either direction, for this long; a write that cannot complete
	// for this long ends the tunnel too. It bounds a forwarded request
	// the same way: a read of the workload's body or of the response
	// body that waits this long, or a write of the response to the
	// workload that does, cuts the exchange. Zero means
	// DefaultTunnelIdleTimeout.
	TunnelIdleTimeout time.Duration
	// MaxTunnels bounds the CONNECT tunnels open at once through the
	// guard; each holds two descriptors. Zero means DefaultMaxTunnels.
	MaxTunnels int
	// MaxTunnelsPerSource bounds the tunnels open at once for one
	// workload source address. Zero means DefaultMaxTunnelsPerSource.
	MaxTunnelsPerSource int
	// MaxConnections bounds the workload connections held at once, idle
	// ones included; one more is answered 503 with
	// [CodeConnectionLimitReached] and closed. Zero means
	// DefaultMaxConnections.
	MaxConnections int
	// MaxIdleConnections bounds the workload connections held idle: a
	// keep-alive connection waiting for its next request, and a tunnel
	// through which nothing has moved for TunnelIdleAfter or whose
	// close grace has begun. Past it, the guard closes the longest idle
	// first. A connection past MaxConnections, or a CONNECT past a
	// tunnel cap, first closes the longest idle one (a tunnel of the
	// same source, for the per-source cap) and is served in its place;
	// it is refused only when nothing is idle. Zero means
	// MaxConnections / [IdleShare], at least 1.
	MaxIdleConnections int
	// TunnelIdleAfter is how long a tunnel moves no byte before it
	// counts as idle for MaxIdleConnections (it is closed outright only
	// after TunnelIdleTimeout). Zero means [DefaultTunnelIdleAfter].
	TunnelIdleAfter time.Duration
	// Zero caps are derived from the process's RLIMIT_NOFILE:
	// [ReservedDescriptors] are kept out, an eighth of the rest goes to
	// idle upstream connections, and MaxConnections gets half of what
	// remains (each held connection may hold one upstream); the tunnel
	// caps are at most that, and each cap at most its Default constant.
	// A cap set here is used as it is.
}

// descriptorCaps returns the default caps of a guard whose process may
// hold nofile descriptors: [ReservedDescriptors] are kept for the
// listener, the resolver and refusing, an eighth of the rest for idle
// upstream connections, and each held workload connection may hold one
// upstream (a tunnel's destination or a request in flight), so
// connections get half of what remains; tunnels and tunnels per source
// are at most that many. Each is at most its Default constant.
func descriptorCaps(nofile uint64) (maxConnections, maxTunnels, maxTunnelsPerSource, maxIdleUpstream int) {
	budget := int(min(nofile, 1<<20)) - ReservedDescriptors
	maxIdleUpstream = min(maxIdleTotal, max(budget/8, 0))
	maxConnections = min(DefaultMaxConnections, max((budget-maxIdleUpstream)/2, 1))
	maxTunnels = min(DefaultMaxTunnels, maxConnections)
	maxTunnelsPerSource = min(DefaultMaxTunnelsPerSource, maxTunnels)
	return
}

// Defaults of the tunnel bounds in [GuardConfig]. A CONNECT beyond a cap
// is refused with [CodeTunnelLimitReached] before anything is dialled.
const (
	DefaultTunnelCloseGrace    = 5 * time.Second
	DefaultTunnelIdleTimeout   = 5 * time.Minute
	DefaultMaxTunnels          = 1024
	DefaultMaxTunnelsPerSource = 256
	// DefaultMaxConnections bounds the workload connections (idle,
	// serving or tunnelling) when RLIMIT_NOFILE allows it.
	DefaultMaxConnections = 2 * DefaultMaxTunnels
	// ReservedDescriptors are kept out of every cap: stdio, the
	// listener, the runtime's poller, resolver sockets, and the
	// [RefusingConnections] a refusal holds while it is written.
	ReservedDescriptors = 16
	// RefusingConnections bounds the connections past MaxConnections
	// being answered at once; one more is closed unanswered.
	RefusingConnections = 4
	// IdleShare: by default at most 1/IdleShare of the connection cap
	// is held idle ([GuardConfig.MaxIdleConnections]).
	IdleShare = 4
	// DefaultTunnelIdleAfter is when a silent tunnel starts to count as
	// idle ([GuardConfig.TunnelIdleAfter]).
	DefaultTunnelIdleAfter = 10 * time.Second
)

// Fixed bounds of a workload connection's requests.
const (
	// HeaderTimeout bounds how long the guard waits for a request's
	// header, from when it starts to read the request to the end of the
	// header: a connection that has not sent a whole header by then is
	// closed unanswered, so a workload that trickles headers holds a
	// connection slot for no longer. The bodies of a forwarded
	// request are bounded by [GuardConfig.TunnelIdleTimeout] instead.
	HeaderTimeout = 30 * time.Second
	// KeepAliveTimeout bounds how long a kept-alive workload connection
	// waits between requests; past it the connection is closed.
	KeepAliveTimeout = 120 * time.Second
	// RefusalLogsPerSecond bounds the guard's refusal log lines: after
	// a burst of as many, at most this many a second are written; the
	// refusals past it are counted, never dropped silently: the next
	// line written says how many went unlogged, and every refusal
	// counts in [MetricGuardRefusals]. The upstream failures' lines,
	// and those of idle connections closed to free a slot, are paced
	// the same way, each apart. A workload looping on refused or
	// failing requests, or on connections left idle, thus cannot turn
	// the guard into a write amplifier on its log.
	RefusalLogsPerSecond = 16
	// MaxRequestHeaderBytes bounds a workload request's line and header
	// together, in bytes: one byte more is answered 431 and never
	// parsed, so the header memory of the guard's connections is at
	// most MaxConnections times this.
	MaxRequestHeaderBytes = 64 << 10
)

// A Guard is the reference workload egress filter: an HTTP forward proxy
// (absolute-form HTTP requests and CONNECT tunnels) that enforces a
// SandboxProfile's network policy for the workload behind it.
//
// For every request, in this order and before any DNS lookup, the guard
// canonicalises the destination (what is matched is what is dialled is
// what is sent as Host) and checks it against the policy. It then dials
// through a [Dialer], so every mode but "none" still refuses every
// non-public address, checked for each answer and again at connect time;
// "unrestricted" means the public internet, never the private network.
// The guard never follows a redirect: a 3xx goes back to the workload,
// whose next request is checked like any other.
//
// A refusal answers 403 with a [RefusalHeader] naming its code (400 when
// the workload's own request body is malformed, code request_invalid); an
// upstream failure answers 502 with an [UpstreamFailureHeader]; a
// destination's own answer never carries either header through. The guard
// adds no forwarding headers, strips the forwarding and client-address
// headers the workload sends (Forwarded, Via, X-Forwarded-*, ...) and the
// hop-by-hop ones, and reads at most 1 MiB of a response header. A
// workload connection has [HeaderTimeout] to send each request's header
// and [KeepAliveTimeout] between requests, and may send at most
// [MaxRequestHeaderBytes] of request line and header. A forwarded
// exchange through which no byte moves for TunnelIdleTimeout (a body the
// workload stops sending, a response it stops reading, a response body
// the destination stops sending) is cut. Its CONNECT tunnels are
// bounded by the tunnel fields of [GuardConfig].
type Guard struct {
	policy *CompiledPolicy
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	log    *slog.Logger
	ln     net.Listener
	pool   upstreamPool
	srv    *http.Server

	// Canonical targets of absolute-form requests and of CONNECT (see
	// targetCache: pure canonicalisation only, never a DNS answer).
	httpTargets, connectTargets *targetCache

	tunnelGrace, tunnelIdle  time.Duration
	maxTunnels, maxPerSource int
	maxConns                 int
	conns                    atomic.Int64  // workload connections held (see connCap)
	refusing                 chan struct{} // semaphore of RefusingConnections
	maxIdle                  int
	idleAfter                time.Duration

	heldMu sync.Mutex             // guards held; never held while a connection is closed
	held   map[*heldConn]struct{} // every workload connection holding a slot

	mu        sync.Mutex
	tunnels   map[net.Conn]struct{} // guarded by mu; hijacked CONNECT connections, both ends
	open      int                   // guarded by mu; tunnels holding a slot (see acquireTunnel)
	perSource map[netip.Addr]int    // guarded by mu; open per workload source; no zero entries
	closed    bool                  // guarded by mu; set by Shutdown

	unobserve func() // unregisters the gauges; nil without a MeterProvider

	refusals   atomic.Int64        // refusals answered (and connections refused), ever
	refusalLog *refusalbudget.Rate // paces their log lines
	failureLog *refusalbudget.Rate // paces the upstream failures' log lines, at the same rate
	reclaimLog *refusalbudget.Rate // paces the lines of idle connections closed for a slot, at the same rate

	// tunnelEnding, when set, runs on a tunnel's goroutine after it
	// has closed both connections and before it gives back its slot.
	// Only tests set it, to hold a closed tunnel's own ending while
	// they observe the slots.
	tunnelEnding atomic.Pointer[func()]
}

// NewGuard returns a Guard for cfg. It refuses a missing policy or
// listener and an invalid dialer configuration.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	if cfg.Policy == nil || cfg.Policy.Type() == "" {
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: guard needs a compiled network policy")
	}
	if cfg.Listener == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "egress: guard needs its listener")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	self, err := netip.ParseAddrPort(cfg.Listener.Addr().String())
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "egress: guard listener %q is not a TCP address", cfg.Listener.Addr())
	}
	d, err := NewDialer(DialerConfig{
		Resolver:                cfg.Resolver,
		TreatAsPublicForTesting: cfg.TreatAsPublicForTesting,
		Exclude:                 []netip.AddrPort{self},
		Logger:                  log,
	})
	if err != nil {
		return nil, err
	}
	if cfg.TunnelCloseGrace < 0 || cfg.TunnelIdleTimeout < 0 || cfg.MaxTunnels < 0 || cfg.MaxTunnelsPerSource < 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "egress: guard tunnel bounds must not be negative")
	}
	if cfg.MaxConnections < 0 || cfg.MaxIdleConnections < 0 || cfg.TunnelIdleAfter < 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "egress: guard connection bound must not be negative")
	}
	conns, tunnels, perSource, idleUp := descriptorCaps(descriptorLimit())
	g := &Guard{policy: cfg.Policy, dial: d.DialContext, log: log, ln: cfg.Listener, tunnels: map[net.Conn]struct{}{},
		httpTargets: &targetCache{scheme: "http"}, connectTargets: &targetCache{scheme: "https"},
		tunnelGrace: orDefault(cfg.TunnelCloseGrace, DefaultTunnelCloseGrace), tunnelIdle: orDefault(cfg.TunnelIdleTimeout, DefaultTunnelIdleTimeout),
		maxTunnels: orDefault(cfg.MaxTunnels, tunnels), maxPerSource: orDefault(cfg.MaxTunnelsPerSource, perSource),
		maxConns: orDefault(cfg.MaxConnections, conns), refusing: make(chan struct{}, RefusingConnections),
		perSource: map[netip.Addr]int{}, held: map[*heldConn]struct{}{},
		idleAfter:  orDefault(cfg.TunnelIdleAfter, DefaultTunnelIdleAfter),
		refusalLog: refusalbudget.NewRate(RefusalLogsPerSecond), failureLog: refusalbudget.NewRate(RefusalLogsPerSecond),
		reclaimLog: refusalbudget.NewRate(RefusalLogsPerSecond)}
	g.maxIdle = orDefault(cfg.MaxIdleConnections, max(g.maxConns/IdleShare, 1))
	g.pool.maxIdle = idleUp
	if g.unobserve, err = g.observe(cfg.MeterProvider); err != nil {
		return nil, err
	}
	// net/http reads 4 KiB past MaxHeaderBytes (its bufio slop): the
	// bound it enforces is then MaxRequestHeaderBytes exactly.
	g.srv = &http.Server{Handler: g, DisableGeneralOptionsHandler: true, ReadHeaderTimeout: HeaderTimeout, IdleTimeout: KeepAliveTimeout, MaxHeaderBytes: MaxRequestHeaderBytes - 4096,
		ErrorLog:  slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnState: g.connState}
	return g, nil
}

// errZeroGuard is the refusal of a Guard not built by NewGuard.
var errZeroGuard = checkfu.Refuse(CodePolicyInvalid, "egress: the zero Guard enforces no policy and serves nothing; build one with NewGuard")

// Addr returns the guard's listener address, or nil for the zero Guard.
func (g *Guard) Addr() net.Addr {
	if g == nil || g.ln == nil {
		return nil
	}
	return g.ln.Addr()
}

// Serve serves on the configured listener until Shutdown. It returns
// http.ErrServerClosed after Shutdown. The zero Guard refuses to serve.
func (g *Guard) Serve() error {
	if g == nil || g.srv == nil {
		return errZeroGuard
	}
	return g.srv.Serve(&connCap{Listener: g.ln, g: g})
}

// A connCap holds at most maxConns workload connections: one more is
// answered 503 with CodeConnectionLimitReached and closed, on a
// descriptor of ReservedDescriptors, so that the guard never runs out
// of descriptors and goes silent.
type connCap struct {
	net.Listener
	g *Guard
}

func (l *connCap) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.g.trimIdle()
		if hc := l.g.hold(c); hc != nil {
			return hc, nil
		}
		// At the cap: the longest idle connection makes room.
		if l.g.reclaim(func(*heldConn) bool { return true }) {
			if hc := l.g.hold(c); hc != nil {
				return hc, nil
			}
		}
		l.g.refuseConn(c)
	}
}

// hold takes a connection slot for c, or returns nil at the cap.
func (g *Guard) hold(c net.Conn) *heldConn {
	if g.conns.Add(1) > int64(g.maxConns) {
		g.conns.Add(-1)
		return nil
	}
	hc := &heldConn{Conn: c, g: g}
	g.heldMu.Lock()
	g.held[hc] = struct{}{}
	g.heldMu.Unlock()
	return hc
}

// A heldConn gives back its slot once, when closed (by net/http, by the
// tunnel that hijacked it, or by reclaim).
type heldConn struct {
	net.Conn
	g         *Guard
	once      sync.Once
	idleSince atomic.Int64           // unix nanoseconds since net/http left it idle; 0 when not idle
	tun       atomic.Pointer[tunnel] // the tunnel that hijacked it, if any
}

func (c *heldConn) Close() error {
	c.once.Do(func() {
		c.g.conns.Add(-1)
		c.g.heldMu.Lock()
		delete(c.g.held, c)
		c.g.heldMu.Unlock()
	})
	return c.Conn.Close()
}

// idleFor reports whether c is idle at now (unix nanoseconds), and since
// how long: a keep-alive connection between requests, a tunnel silent
// for TunnelIdleAfter, or a tunnel in its close grace.
func (c *heldConn) idleFor(now int64, after time.Duration) (time.Duration, bool) {
	if t := c.tun.Load(); t != nil {
		d := time.Duration(now - t.last.Load())
		return d, d >= after || t.closeAt.Load() != 0
	}
	if since := c.idleSince.Load(); since != 0 {
		return time.Duration(now - since), true
	}
	return 0, false
}

// connState marks the connections net/http leaves idle between requests,
// and closes the longest idle past MaxIdleConnections.
func (g *Guard) connState(c net.Conn, state http.ConnState) {
	hc, ok := c.(*heldConn)
	if !ok {
		return
	}
	switch state {
	case http.StateIdle:
		hc.idleSince.Store(time.Now().UnixNano())
		g.trimIdle()
	case http.StateActive, http.StateHijacked:
		hc.idleSince.Store(0)
	}
}

// idleHeld returns the idle connections held, longest idle first, each
// matching keep.
func (g *Guard) idleHeld(keep func(*heldConn) bool) []*heldConn {
	type aged struct {
		c   *heldConn
		age time.Duration
	}
	now := time.Now().UnixNano()
	var idle []aged
	g.heldMu.Lock()
	for c := range g.held {
		if age, ok := c.idleFor(now, g.idleAfter); ok && keep(c) {
			idle = append(idle, aged{c, age})
		}
	}
	g.heldMu.Unlock()
	slices.SortFunc(idle, func(a, b aged) int { return cmp.Compare(b.age, a.age) })
	out := make([]*heldConn, len(idle))
	for i, a := range idle {
		out[i] = a.c
	}
	return out
}

// trimIdle closes the longest idle connections past MaxIdleConnections.
// It runs on every accept and every request's end, so it counts before
// it sorts.
func (g *Guard) trimIdle() {
	now, n := time.Now().UnixNano(), 0
	g.heldMu.Lock()
	for c := range g.held {
		if _, ok := c.idleFor(now, g.idleAfter); ok {
			n++
		}
	}
	g.heldMu.Unlock()
	if n <= g.maxIdle {
		return
	}
	idle := g.idleHeld(func(*heldConn) bool { return true })
	for _, c := range idle[:max(len(idle)-g.maxIdle, 0)] {
		g.close(c)
	}
}

// reclaim closes the longest idle connection that matches keep, and
// reports whether there was one. Its connection slot, and its tunnel
// slot if it is a tunnel, are free when reclaim returns.
func (g *Guard) reclaim(keep func(*heldConn) bool) bool {
	idle := g.idleHeld(keep)
	if len(idle) == 0 {
		return false
	}
	g.close(idle[0])
	return true
}

// close closes a held connection and, for a tunnel, its destination,
// giving back both slots now.
func (g *Guard) close(c *heldConn) {
	if unlogged, ok := g.reclaimLog.Allow(time.Now()); ok {
		g.log.Info("egress guard: closed an idle connection", "idle_limit", g.maxIdle, "unlogged_before", unlogged)
	}
	if t := c.tun.Load(); t != nil {
		t.release()
		t.up.Close()
	}
	c.Close()
}

// connRefusal is the whole answer to a connection past MaxConnections.
var connRefusal = "HTTP/1.1 503 Service Unavailable\r\n" + RefusalHeader + ": " + string(CodeConnectionLimitReached) +
	"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"

// refuseConn answers c with connRefusal and closes it. It first reads
// what the workload already sent, so that closing does not reset the
// answer away; with one of RefusingConnections free it keeps reading, on
// a goroutine, for up to a second.
func (g *Guard) refuseConn(c net.Conn) {
	if unlogged, ok := g.countRefusal(); ok {
		g.log.Info("egress guard: refused", "code", string(CodeConnectionLimitReached), "limit", g.maxConns, "unlogged_before", unlogged)
	}
	c.SetDeadline(time.Now().Add(time.Millisecond))
	if _, err := io.WriteString(c, connRefusal); err != nil {
		c.Close()
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	select {
	case g.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-g.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// Shutdown stops accepting, waits (until ctx is done) for requests in
// flight, and closes every open tunnel.
func (g *Guard) Shutdown(ctx context.Context) error {
	if g == nil || g.srv == nil {
		return nil
	}
	err := g.srv.Shutdown(ctx)
	if g.unobserve != nil {
		g.unobserve()
	}
	g.pool.closeAll()
	g.mu.Lock()
	g.closed = true
	for c := range g.tunnels {
		c.Close()
	}
	g.mu.Unlock()
	return err
}

// ServeHTTP handles one proxy request.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.srv == nil { // the zero Guard: refuse, never forward
		w.Header().Set(RefusalHeader, string(CodePolicyInvalid))
		http.Error(w, "checkfu guard: "+errZeroGuard.Error(), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		g.serveConnect(w, r)
		return
	}
	if !r.URL.IsAbs() {
		g.refuse(w, r, checkfu.Refuse(CodeRequestInvalid, "egress: guard is a forward proxy: send absolute-form requests or CONNECT"))
		return
	}
	if r.URL.Scheme != "http" {
		g.refuse(w, r, checkfu.Refuse(CodeRequestInvalid, "egress: scheme %s is not proxied in absolute form (use CONNECT for https)", checkfu.Quote(r.URL.Scheme)))
		return
	}
	if r.URL.User != nil {
		g.refuse(w, r, checkfu.Refuse(CodeRequestInvalid, "egress: URL carries userinfo"))
		return
	}
	target, err := g.httpTargets.get(r.URL.Host)
	if err != nil {
		g.refuse(w, r, err)
		return
	}
	if err := g.policy.Permits(target.host, target.port); err != nil {
		g.refuse(w, r, err)
		return
	}
	// One canonical form: matched, dialled, and sent as Host.
	g.forward(w, r, target.authority, target.hostHeader)
}

// canonicalTarget canonicalises an authority exactly as [CanonicalRequest]
// does for a URL's host (it runs the same canonicalAuthority, with no
// request to build and no headers to copy): a canonical DNS name or an IP
// literal, and an explicit port (defaulted from scheme). Only Scheme,
// Host and Port of the result are meaningful.
func canonicalTarget(scheme, authority string) (Request, error) {
	host, port, err := canonicalAuthority(authority, scheme)
	if err != nil {
		return Request{}, err
	}
	return Request{Scheme: scheme, Host: host, Port: port, Path: "/", Method: http.MethodGet}, nil
}

// serveConnect opens a tunnel to an explicit host:port. The target is the
// request-target itself, in authority form: net/http also accepts
// "CONNECT /path" and then takes the destination from the Host header,
// which the guard refuses, as it refuses userinfo, a path or an escape in
// the target.
func (g *Guard) serveConnect(w http.ResponseWriter, r *http.Request) {
	if _, _, err := net.SplitHostPort(r.RequestURI); err != nil || r.URL.Host != r.RequestURI {
		g.refuse(w, r, checkfu.Refuse(CodeRequestInvalid, "egress: CONNECT target %s is not host:port", checkfu.Quote(r.RequestURI)))
		return
	}
	target, err := g.connectTargets.get(r.URL.Host)
	if err != nil {
		g.refuse(w, r, err)
		return
	}
	if err := g.policy.Permits(target.host, target.port); err != nil {
		g.refuse(w, r, err)
		return
	}
	src := sourceOf(r)
	if err := g.acquireTunnel(src); err != nil {
		g.refuse(w, r, err)
		return
	}
	// The slot is released when the tunnel ends, by run below, or here
	// when it never starts.
	started := false
	defer func() {
		if !started {
			g.releaseTunnel(src)
		}
	}()
	up, err := g.dial(r.Context(), "tcp", target.authority)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		g.fail(w, r, &UpstreamError{Code: CodeUpstreamFailed, Target: r.Host, Err: errors.New("connection cannot be hijacked")})
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !g.track(up, down) {
		up.Close()
		down.Close()
		return
	}
	// Bytes the client sent after the CONNECT line are in buf: they are
	// sent first, then the connection itself is read.
	var early []byte
	if n := buf.Reader.Buffered(); n > 0 {
		p, _ := buf.Reader.Peek(n)
		early = bytes.Clone(p)
	}
	// The tunnel runs on goroutines of its own, so that this handler
	// returns and net/http lets go of the connection's buffers and its
	// goroutine's stack: a held tunnel costs two small goroutines.
	started = true
	t := &tunnel{g: g, src: src, up: up}
	t.last.Store(time.Now().UnixNano())
	if hc, ok := down.(*heldConn); ok {
		hc.tun.Store(t)
	}
	go g.runTunnel(t, up, down, early)
}

// runTunnel answers the CONNECT, forwards early, pipes both directions,
// then closes both connections and releases the tunnel slot of src.
func (g *Guard) runTunnel(t *tunnel, up, down net.Conn, early []byte) {
	defer t.release()
	defer func() {
		if hook := g.tunnelEnding.Load(); hook != nil {
			(*hook)()
		}
	}()
	defer g.untrack(up, down)
	down.SetWriteDeadline(time.Now().Add(g.tunnelIdle))
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	if len(early) > 0 {
		up.SetWriteDeadline(time.Now().Add(g.tunnelIdle))
		if _, err := up.Write(early); err != nil {
			return
		}
	}
	g.pipe(t, up, down)
}

// pipe copies both directions of a tunnel, one on the calling
// goroutine, until both have ended, or one has ended and TunnelCloseGrace
// has passed, or nothing has moved for TunnelIdleTimeout. Its caller
// closes both connections.
func (g *Guard) pipe(t *tunnel, up, down net.Conn) {
	done := make(chan struct{})
	go func() {
		g.copyHalf(t, up, down) // workload to destination
		close(done)
	}()
	g.copyHalf(t, down, up) // destination to workload
	<-done
}

// A tunnel is what the two directions of a CONNECT tunnel share.
type tunnel struct {
	last    atomic.Int64 // unix nanoseconds of the last byte moved, either way
	closeAt atomic.Int64 // unix nanoseconds when both directions stop; 0 until one has ended
	g       *Guard
	src     netip.Addr // the workload source whose slot it holds
	up      net.Conn   // the destination
	once    sync.Once  // gives back the tunnel slot
}

// release gives back the tunnel's slot, once: when the tunnel ends, or
// earlier when reclaim closes it.
func (t *tunnel) release() { t.once.Do(func() { t.g.releaseTunnel(t.src) }) }

// deadline is when an operation starting now must end: after the idle
// timeout, or at closeAt when that is sooner.
func (g *Guard) deadline(t *tunnel) time.Time {
	d := time.Now().Add(g.tunnelIdle)
	if c := t.closeAt.Load(); c != 0 && c < d.UnixNano() {
		return time.Unix(0, c)
	}
	return d
}

// copyHalf copies src to dst (see copyIdle), then half-closes dst and
// gives the other direction the close grace to end (none when the tunnel
// went idle): the first direction to end sets closeAt, and moves the other
// direction's deadlines to it.
func (g *Guard) copyHalf(t *tunnel, dst, src net.Conn) {
	idle := g.copyIdle(dst, src, t)
	if tc, ok := dst.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	at := time.Now().Add(g.tunnelGrace)
	if idle {
		at = time.Now()
	}
	if t.closeAt.CompareAndSwap(0, at.UnixNano()) {
		dst.SetReadDeadline(at)  // the other direction reads dst
		src.SetWriteDeadline(at) // and writes src
	}
}

// copyIdle copies src to dst until src ends or fails, until neither
// direction of the tunnel has moved a byte for the idle timeout, or until
// closeAt has passed. It reports whether it ended because the tunnel was
// idle.
func (g *Guard) copyIdle(dst, src net.Conn, t *tunnel) (idle bool) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		g.setDeadline(t, src.SetReadDeadline)
		n, err := src.Read(buf)
		if n > 0 {
			t.last.Store(time.Now().UnixNano())
			g.setDeadline(t, dst.SetWriteDeadline)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				var ne net.Error
				return errors.As(werr, &ne) && ne.Timeout() && t.closeAt.Load() == 0
			}
			t.last.Store(time.Now().UnixNano())
		}
		if err != nil {
			var ne net.Error
			if c := t.closeAt.Load(); c != 0 && time.Now().UnixNano() >= c {
				return false // the other direction ended, and the grace has passed
			}
			timeout := errors.As(err, &ne) && ne.Timeout()
			if timeout && time.Since(time.Unix(0, t.last.Load())) < g.tunnelIdle {
				continue // the other direction is moving
			}
			return timeout
		}
	}
}

// setDeadline sets a deadline with set (a connection's SetReadDeadline or
// SetWriteDeadline), then checks closeAt again: the other direction may
// have set it, and moved this deadline, in between.
func (g *Guard) setDeadline(t *tunnel, set func(time.Time) error) {
	d := g.deadline(t)
	set(d)
	if c := t.closeAt.Load(); c != 0 && c < d.UnixNano() {
		set(time.Unix(0, c))
	}
}

// sourceOf returns the workload's source address of r, unmapped; the
// zero Addr when the connection has none.
func sourceOf(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// acquireTunnel takes a tunnel slot for src. At the guard's cap it
// first closes the longest idle tunnel, at src's cap the longest idle
// tunnel of src; it refuses when none is idle.
func (g *Guard) acquireTunnel(src netip.Addr) error {
	g.trimIdle()
	for reclaimed := false; ; reclaimed = true {
		g.mu.Lock()
		full, srcFull := g.open >= g.maxTunnels, g.perSource[src] >= g.maxPerSource
		if !full && !srcFull {
			g.open++
			g.perSource[src]++
			g.mu.Unlock()
			return nil
		}
		open, perSource := g.open, g.perSource[src]
		g.mu.Unlock()
		if !reclaimed && g.reclaim(func(c *heldConn) bool {
			t := c.tun.Load()
			return t != nil && (!srcFull || t.src == src)
		}) {
			continue
		}
		if full {
			return checkfu.Refuse(CodeTunnelLimitReached, "egress: the guard holds %d tunnels, its limit", open)
		}
		return checkfu.Refuse(CodeTunnelLimitReached, "egress: this workload source holds %d tunnels, its limit", perSource)
	}
}

// releaseTunnel gives back a slot taken by acquireTunnel.
func (g *Guard) releaseTunnel(src netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open--
	if g.perSource[src]--; g.perSource[src] <= 0 {
		delete(g.perSource, src)
	}
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (g *Guard) track(cs ...net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	for _, c := range cs {
		g.tunnels[c] = struct{}{}
	}
	return true
}

func (g *Guard) untrack(cs ...net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(g.tunnels, c)
	}
}

// fail answers err: 403 for a refusal, 502 for anything else.
func (g *Guard) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ref *checkfu.Refusal
	if errors.As(err, &ref) {
		g.refuse(w, r, ref)
		return
	}
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		ue = &UpstreamError{Code: CodeUpstreamFailed, Target: r.Host, Err: err}
		if errors.Is(err, context.Canceled) {
			return // the workload went away
		}
	}
	if unlogged, ok := g.failureLog.Allow(time.Now()); ok {
		g.log.Warn("egress guard: upstream failure", "code", string(ue.Code), "target", logText(ue.Target), "err", ue.Err, "unlogged_before", unlogged)
	}
	w.Header().Set(UpstreamFailureHeader, string(ue.Code))
	http.Error(w, "checkfu guard: "+ue.Error(), http.StatusBadGateway)
}

// logText returns hostile text for a log attribute. Text that needs no
// escaping and fits checkfu.MaxQuoted bytes is returned as it is, and
// the handler quotes it if its format needs to (a text handler when it
// holds a space, JSON always); anything else is checkfu.Quote's escaped
// and cut form, so that no handler can print it raw. A text log thus
// shows target=api.example.com, not target="\"api.example.com\"".
func logText(s string) string {
	if len(s) <= checkfu.MaxQuoted && strconv.Quote(s) == `"`+s+`"` {
		return s
	}
	return checkfu.Quote(s)
}

// refuse answers a refusal: 403 with its code.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	g.refuseStatus(w, r, err, http.StatusForbidden)
}

// refuseStatus answers a refusal with status and its code.
func (g *Guard) refuseStatus(w http.ResponseWriter, r *http.Request, err error, status int) {
	code, _ := checkfu.CodeOf(err)
	if code == "" {
		code = CodeRequestInvalid
	}
	if unlogged, ok := g.countRefusal(); ok {
		g.log.Info("egress guard: refused", "code", string(code), "method", r.Method, "target", logText(r.Host), "reason", err.Error(), "unlogged_before", unlogged)
	}
	msg := err.Error()
	if code == CodeDestinationNotPublic {
		// The dialer's reason names the address the destination resolved
		// to. Told to the workload, that would make the guard an oracle
		// for internal DNS (names and their private addresses); the
		// workload learns the code and the host it asked for, the log
		// keeps the reason.
		msg = fmt.Sprintf("refused: %s: egress: %s does not resolve to public addresses only", code, checkfu.Quote(r.Host))
	}
	w.Header().Set(RefusalHeader, string(code))
	http.Error(w, "checkfu guard: "+msg, status)
}

// countRefusal counts one refusal and reports whether its log line may
// be written (see RefusalLogsPerSecond), with how many refusals went
// unlogged since the last line written.
func (g *Guard) countRefusal() (unlogged int64, ok bool) {
	g.refusals.Add(1)
	return g.refusalLog.Allow(time.Now())
}
