package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"golang.org/x/net/dns/dnsmessage"
)

// CodeDestinationNotPublic is the code of the Refusal returned when a
// destination is, or resolves to, an address that is not public (see
// [IsPublic]), is a public address of the host the Dialer runs on, or is
// the guard's own listener.
const CodeDestinationNotPublic checkfu.Code = "destination_not_public"

// testTopologies are the only blocks TreatAsPublicForTesting may name:
// loopback and the benchmarking blocks, where tests build their isolated
// topologies. A private network, link local (cloud metadata) or any
// public-looking widening can never be declared public.
var testTopologies = [...]netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("2001:2::/48"),
}

// defaultConnectTimeout bounds one TCP connect when DialerConfig.Timeout
// is zero.
const defaultConnectTimeout = 10 * time.Second

// DialerConfig configures [NewDialer]. Its zero value is the production
// configuration: the system resolver, public addresses only.
type DialerConfig struct {
	// Resolver is the "host:port" of a DNS server to resolve names with,
	// over UDP (falling back to TCP as DNS does). Empty means the system
	// resolver. Tests point it at a server they own.
	Resolver string

	// TreatAsPublicForTesting lists blocks to treat as public, for
	// isolated test topologies only. Each must lie inside 127.0.0.0/8,
	// ::1/128, 198.18.0.0/15 or 2001:2::/48; anything else is refused by
	// NewDialer. Each block is logged at Warn level when the Dialer is
	// built.
	TreatAsPublicForTesting []netip.Prefix

	// Exclude lists addresses that are never dialled even when public:
	// a guard passes its own listener so that it cannot loop into
	// itself. An unspecified address (0.0.0.0 or ::) excludes that port
	// on every loopback address and every address of every local
	// interface.
	Exclude []netip.AddrPort

	// Timeout bounds each TCP connect. Zero means 10 seconds.
	Timeout time.Duration

	// Logger receives the testing-mode warnings. Nil means slog.Default().
	Logger *slog.Logger
}

// A Dialer connects only to public addresses, and never to a public
// address of the host it runs on (read from its interfaces, again at
// most every two seconds). Every address it connects
// to is checked against [IsPublic] (and the configured test blocks and
// exclusions) twice: once for every answer of the one DNS resolution it
// makes, and again at connect time, on the socket address itself, in the
// net.Dialer's ControlContext hook, after which nothing can change the
// address before connect(2).
//
// A name any of whose answers is not public is refused as a whole with
// [CodeDestinationNotPublic]; no answer of it is dialled, not even the
// public ones. A mixed answer set is what a rebinding attacker produces,
// and refusing it makes the attempt visible instead of silently working
// around it.
//
// Failures that are not refusals (the name does not resolve, nothing
// accepts the connection) are [*UpstreamError] values with
// [CodeDNSFailed] or [CodeUpstreamConnectFailed].
//
// The zero Dialer is ready to use: the system resolver, public addresses
// only. A Dialer is safe for concurrent use.
type Dialer struct {
	resolver      *net.Resolver
	treatAsPublic []netip.Prefix
	exclude       []netip.AddrPort
	timeout       time.Duration
	server        string     // "ip:port" of the configured DNS server; empty: resolv.conf's
	self          *hostAddrs // nil means thisHost; tests give the host addresses
}

// NewDialer returns a Dialer configured by cfg. It refuses, with code
// [CodeInvalidDialerConfig], a TreatAsPublicForTesting block outside the
// test topologies, an unmasked or zoned block, and a malformed Resolver.
func NewDialer(cfg DialerConfig) (*Dialer, error) {
	d := &Dialer{timeout: cfg.Timeout}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, p := range cfg.TreatAsPublicForTesting {
		if !p.IsValid() || p != p.Masked() || !insideTestTopology(p) {
			return nil, checkfu.Refuse(CodeInvalidDialerConfig,
				"egress: treat-as-public block %q is not a masked block inside 127.0.0.0/8, ::1/128, 198.18.0.0/15 or 2001:2::/48", p.String())
		}
		log.Warn("egress: TESTING ONLY: treating a non-public block as public", "block", p.String())
		d.treatAsPublic = append(d.treatAsPublic, p)
	}
	for _, ap := range cfg.Exclude {
		d.exclude = append(d.exclude, excludedAddrs(ap)...)
	}
	if cfg.Resolver != "" {
		server, err := netip.ParseAddrPort(cfg.Resolver)
		if err != nil {
			return nil, checkfu.Refuse(CodeInvalidDialerConfig, "egress: resolver %q is not an IP:port", cfg.Resolver)
		}
		d.server = server.String()
	}
	d.resolver = &net.Resolver{PreferGo: true, Dial: d.dialDNS}
	return d, nil
}

// dialDNS connects the Go resolver to the configured DNS server (or, with
// none configured, to the server resolv.conf names, which Go passes as
// address), and wraps the connection so that it carries only questions
// about the rooted name lookup put in ctx.
func (d *Dialer) dialDNS(ctx context.Context, network, address string) (net.Conn, error) {
	asked, _ := ctx.Value(askedKey{}).(string)
	if asked == "" {
		return nil, errors.New("egress: DNS query outside a Dialer lookup")
	}
	if d.server != "" {
		address = d.server
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if pc, ok := c.(net.PacketConn); ok {
		return &askedPacketConn{askedConn{Conn: c, asked: asked}, pc}, nil
	}
	return &askedConn{Conn: c, asked: asked, stream: true}, nil
}

// askedKey is the context key under which lookup passes the rooted name
// it resolves to dialDNS.
type askedKey struct{}

// errOtherName is the error of a DNS query for a name other than the one
// the Dialer asked about: a resolver that expands a search list or a
// domain is stopped before the query leaves the host.
var errOtherName = errors.New("egress: the resolver asked about another name than the one looked up")

// An askedConn is a connection to a DNS server that refuses to send a
// query whose question is not the name asked. Go's resolver accepts only
// a response whose question is its query's, and follows only the CNAME
// chain of that name, so every answer it returns is for the name asked.
type askedConn struct {
	net.Conn
	asked  string // rooted, as the resolver sends it
	stream bool   // TCP: each message has a two-byte length prefix
}

func (c *askedConn) Write(b []byte) (int, error) {
	msg := b
	if c.stream {
		if len(msg) < 2 {
			return 0, errOtherName
		}
		msg = msg[2:]
	}
	var p dnsmessage.Parser
	if _, err := p.Start(msg); err != nil {
		return 0, errOtherName
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 || !strings.EqualFold(qs[0].Name.String(), c.asked) {
		return 0, errOtherName
	}
	return c.Conn.Write(b)
}

// askedPacketConn is an askedConn over UDP: Go's resolver frames its
// messages as datagrams only when its connection is a net.PacketConn.
type askedPacketConn struct {
	askedConn
	net.PacketConn
}

func (c *askedPacketConn) Read(b []byte) (int, error)         { return c.askedConn.Read(b) }
func (c *askedPacketConn) Write(b []byte) (int, error)        { return c.askedConn.Write(b) }
func (c *askedPacketConn) Close() error                       { return c.askedConn.Close() }
func (c *askedPacketConn) LocalAddr() net.Addr                { return c.askedConn.LocalAddr() }
func (c *askedPacketConn) SetDeadline(t time.Time) error      { return c.askedConn.SetDeadline(t) }
func (c *askedPacketConn) SetReadDeadline(t time.Time) error  { return c.askedConn.SetReadDeadline(t) }
func (c *askedPacketConn) SetWriteDeadline(t time.Time) error { return c.askedConn.SetWriteDeadline(t) }

// CodeInvalidDialerConfig is the code of the Refusal NewDialer returns for
// a configuration it will not build.
const CodeInvalidDialerConfig checkfu.Code = "invalid_dialer_config"

func insideTestTopology(p netip.Prefix) bool {
	for _, t := range testTopologies {
		if t.Bits() <= p.Bits() && t.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// excludedAddrs expands an excluded listener address: an unspecified
// address stands for every local interface address on that port.
func excludedAddrs(ap netip.AddrPort) []netip.AddrPort {
	if !ap.Addr().IsUnspecified() {
		return []netip.AddrPort{netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}
	}
	out := []netip.AddrPort{
		netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port()),
		netip.AddrPortFrom(netip.IPv6Unspecified(), ap.Port()),
	}
	addrs, _ := net.InterfaceAddrs() // best effort: loopback and the rest are non-public anyway
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, netip.AddrPortFrom(pfx.Addr().Unmap(), ap.Port()))
		}
	}
	return out
}

// permit returns nil when ap may be dialled, and a destination_not_public
// Refusal naming host otherwise.
func (d *Dialer) permit(host string, ap netip.AddrPort) error {
	a := ap.Addr()
	if a.Zone() != "" {
		return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, which has a zone", host, a)
	}
	a = a.Unmap()
	for _, x := range d.exclude {
		// A listener on an unspecified address also accepts on every
		// loopback address, not only on the interface addresses.
		if x.Port() == ap.Port() && (x.Addr() == a || x.Addr().IsUnspecified() && a.IsLoopback()) {
			return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q reaches %s, the guard's own listener", host, netip.AddrPortFrom(a, ap.Port()))
		}
	}
	if IsPublic(a) {
		// A host's own public address is reached over its loopback
		// path: it hits services bound to every interface and passes
		// none of the network's filters.
		if d.host().has(a) {
			return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, an address of this host", host, a)
		}
		return nil
	}
	for _, p := range d.treatAsPublic {
		if p.Contains(a) {
			return nil
		}
	}
	return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, which is not a public address", host, a)
}

// host returns the Dialer's view of this host's public addresses.
func (d *Dialer) host() *hostAddrs {
	if d.self != nil {
		return d.self
	}
	return thisHost
}

// hostAddrsTTL is how long a list of this host's addresses is used before
// the interfaces are read again, so that an address assigned while a
// Dialer runs is refused within that time.
const hostAddrsTTL = 2 * time.Second

// thisHost lists the public addresses of this host's interfaces.
var thisHost = &hostAddrs{load: interfaceAddrs}

// hostAddrs is a cached list of the public addresses of a host's
// interfaces. Non-public addresses are left out: they are refused anyway,
// and loopback or a test block may be treated as public by a test.
type hostAddrs struct {
	load func() ([]netip.Addr, error)
	mu   sync.Mutex // serialises refreshes
	cur  atomic.Pointer[hostSnapshot]
}

type hostSnapshot struct {
	at    time.Time
	addrs []netip.Addr
}

// has reports whether a (unmapped) is one of the host's public addresses.
func (h *hostAddrs) has(a netip.Addr) bool {
	for _, x := range h.snapshot() {
		if x == a {
			return true
		}
	}
	return false
}

// snapshot returns the current list, reading the interfaces again when it
// is older than hostAddrsTTL. A failed read keeps the last list.
func (h *hostAddrs) snapshot() []netip.Addr {
	if s := h.cur.Load(); s != nil && time.Since(s.at) < hostAddrsTTL {
		return s.addrs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.cur.Load()
	if s != nil && time.Since(s.at) < hostAddrsTTL {
		return s.addrs
	}
	next := &hostSnapshot{at: time.Now()}
	if s != nil {
		next.addrs = s.addrs
	}
	if all, err := h.load(); err == nil {
		next.addrs = nil
		for _, a := range all {
			if a = a.Unmap(); IsPublic(a) {
				next.addrs = append(next.addrs, a)
			}
		}
	}
	h.cur.Store(next)
	return next.addrs
}

// interfaceAddrs returns the addresses of every local interface.
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, pfx.Addr().Unmap())
		}
	}
	return out, nil
}

// control is the connect-time check: it runs on the socket address
// itself, after resolution and immediately before connect(2).
func (d *Dialer) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return checkfu.Refuse(CodeDestinationNotPublic, "egress: cannot classify socket address %q", address)
	}
	return d.permit(ap.Addr().String(), ap)
}

// DialContext connects to address ("host:port") over network ("tcp",
// "tcp4" or "tcp6"), if every address host resolves to is public. host is
// an IP literal or a canonical DNS name (see [CanonicalHost]); any other
// spelling is refused rather than reinterpreted, so the name dialled is the
// name the caller matched.
//
// The error is a [*checkfu.Refusal] (destination_not_public,
// invalid_host, invalid_request) when policy forbids the connection, and a
// [*UpstreamError] when the connection was permitted but failed.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, checkfu.Refuse(CodeInvalidRequest, "egress: network %q is not tcp", network)
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, checkfu.Refuse(CodeInvalidRequest, "egress: address %q is not host:port", address)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 || strconv.FormatUint(port, 10) != portText {
		return nil, checkfu.Refuse(CodeInvalidRequest, "egress: address %q has an invalid port", address)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		if h, err := CanonicalHost(host); err != nil || h != host {
			return nil, checkfu.Refuse(CodeInvalidHost, "egress: dial host %q is not a canonical DNS name", host)
		}
		addrs, err = d.lookup(ctx, host)
		if err != nil {
			return nil, &UpstreamError{Code: CodeDNSFailed, Target: address, Err: err}
		}
		if len(addrs) == 0 {
			return nil, &UpstreamError{Code: CodeDNSFailed, Target: address, Err: errors.New("no addresses")}
		}
	}
	// One non-public answer refuses the whole name.
	for _, a := range addrs {
		if err := d.permit(host, netip.AddrPortFrom(a, uint16(port))); err != nil {
			return nil, err
		}
	}
	return d.dialAddrs(ctx, network, address, addrs, uint16(port))
}

// lookup resolves host, every address family, as the rooted name host+".":
// no search list, domain or ndots of resolv.conf applies, so the name
// resolved is the name matched. The queries it sends are checked to ask
// about that name only (see askedConn). A zero Dialer builds its resolver
// here.
func (d *Dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	r := d.resolver
	if r == nil {
		r = &net.Resolver{PreferGo: true, Dial: d.dialDNS}
	}
	rooted := host + "."
	addrs, err := r.LookupNetIP(context.WithValue(ctx, askedKey{}, rooted), "ip", rooted)
	var de *net.DNSError
	if errors.As(err, &de) {
		// Name the name matched, without the root dot.
		de2 := *de
		de2.Name = host
		err = &de2
	}
	return addrs, err
}

// dialAddrs connects to the first of addrs that accepts, each address
// checked again at connect time by control.
func (d *Dialer) dialAddrs(ctx context.Context, network, target string, addrs []netip.Addr, port uint16) (net.Conn, error) {
	timeout := d.timeout
	if timeout == 0 {
		timeout = defaultConnectTimeout
	}
	nd := net.Dialer{Timeout: timeout, ControlContext: d.control}
	var last error
	for _, a := range addrs {
		if (network == "tcp4" && !a.Unmap().Is4()) || (network == "tcp6" && a.Unmap().Is4()) {
			continue
		}
		c, err := nd.DialContext(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, nil
		}
		var r *checkfu.Refusal
		if errors.As(err, &r) {
			return nil, r
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if last == nil {
		last = fmt.Errorf("no %s address", network)
	}
	return nil, &UpstreamError{Code: CodeUpstreamConnectFailed, Target: target, Err: last}
}
