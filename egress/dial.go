package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"golang.org/x/net/dns/dnsmessage"
)

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

// defaultConnectTimeout bounds one dial when DialerConfig.Timeout
// is zero.
const defaultConnectTimeout = 10 * time.Second

// minConnectShare is the least time one address of a name gets when the
// connect timeout is shared among the name's addresses, as net.Dialer
// shares it: each address gets an equal share of what is left, but not
// less than this, and never more than what is left.
const minConnectShare = 2 * time.Second

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
	// on every loopback address; every address of every local interface,
	// as the interfaces are at the time of each dial, is refused anyway
	// (see [Dialer]).
	Exclude []netip.AddrPort

	// Timeout bounds the whole connect of one dial, across every
	// address the name resolves to: each address gets an equal share of
	// what is left, but at least two seconds (and never more than is
	// left), so a name answering with many dead addresses holds a dial
	// no longer than Timeout. Zero means 10 seconds.
	Timeout time.Duration

	// Logger receives the testing-mode warnings. Nil means slog.Default().
	Logger *slog.Logger
}

// A Dialer connects only to public addresses, and never to an address of
// the host it runs on: its interfaces are read at every dial, and an
// address of a TreatAsPublicForTesting block on them is refused too
// (loopback treated as public excepted). Every address it connects
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
// [checkfu.CodeConfigInvalid], a TreatAsPublicForTesting block outside the
// test topologies, an unmasked or zoned block, and a malformed Resolver.
func NewDialer(cfg DialerConfig) (*Dialer, error) {
	d := &Dialer{timeout: cfg.Timeout}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	for _, p := range cfg.TreatAsPublicForTesting {
		if !p.IsValid() || p != p.Masked() || !insideTestTopology(p) {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid,
				"egress: treat-as-public block %q is not a masked block inside 127.0.0.0/8, ::1/128, 198.18.0.0/15 or 2001:2::/48", p.String())
		}
		log.Warn("egress: TESTING ONLY: treating a non-public block as public", "block", p.String())
		d.treatAsPublic = append(d.treatAsPublic, p)
	}
	for _, ap := range cfg.Exclude {
		d.exclude = append(d.exclude, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	if cfg.Resolver != "" {
		server, err := netip.ParseAddrPort(cfg.Resolver)
		if err != nil {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "egress: resolver %q is not an IP:port", cfg.Resolver)
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

func insideTestTopology(p netip.Prefix) bool {
	for _, t := range testTopologies {
		if t.Bits() <= p.Bits() && t.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// permit returns nil when ap may be dialled, and a destination_not_public
// Refusal naming host otherwise. own lists this host's interface
// addresses, read for this dial.
func (d *Dialer) permit(host string, ap netip.AddrPort, own []netip.Addr) error {
	a := ap.Addr()
	if a.Zone() != "" {
		return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, which has a zone", host, a)
	}
	a = a.Unmap()
	for _, x := range d.exclude {
		// A listener on an unspecified address also accepts on every
		// loopback address; its interface addresses are refused below,
		// as addresses of this host.
		if x.Port() == ap.Port() && (x.Addr() == a || x.Addr().IsUnspecified() && a.IsLoopback()) {
			return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q reaches %s, the guard's own listener", host, netip.AddrPortFrom(a, ap.Port()))
		}
	}
	treated := false
	if !IsPublic(a) {
		for _, p := range d.treatAsPublic {
			if p.Contains(a) {
				treated = true
				break
			}
		}
		if !treated {
			return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, which is not a public address", host, a)
		}
	}
	// A host's own address is reached over its loopback path: it hits
	// services bound to every interface and passes none of the network's
	// filters. That holds for an address of a block treated as public
	// too (the guard's own test-network address); only loopback treated
	// as public is exempt, since a loopback test topology has its
	// destinations on this host by construction.
	if slices.Contains(own, a) && !(treated && a.IsLoopback()) {
		return checkfu.Refuse(CodeDestinationNotPublic, "egress: %q resolves to %s, an address of this host", host, a)
	}
	return nil
}

// host returns the Dialer's view of this host's addresses.
func (d *Dialer) host() *hostAddrs {
	if d.self != nil {
		return d.self
	}
	return thisHost
}

// thisHost lists the addresses of this host's interfaces.
var thisHost = &hostAddrs{load: interfaceAddrs}

// hostAddrs reads the addresses of a host's interfaces, every class, each
// time it is asked: an address assigned while a Dialer runs is refused
// from its first dial on.
type hostAddrs struct {
	load func() ([]netip.Addr, error)
	last atomic.Pointer[[]netip.Addr] // the last list read
}

// current returns the host's addresses (unmapped) as they are now; when
// the interfaces cannot be read, the last list read.
func (h *hostAddrs) current() []netip.Addr {
	all, err := h.load()
	if err != nil {
		if last := h.last.Load(); last != nil {
			return *last
		}
		return nil
	}
	for i, a := range all {
		all[i] = a.Unmap()
	}
	h.last.Store(&all)
	return all
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

// control returns the connect-time check: it runs on the socket address
// itself, after resolution and immediately before connect(2).
func (d *Dialer) control(own []netip.Addr) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return checkfu.Refuse(CodeDestinationNotPublic, "egress: cannot classify socket address %q", address)
		}
		return d.permit(ap.Addr().String(), ap, own)
	}
}

// DialContext connects to address ("host:port") over network ("tcp",
// "tcp4" or "tcp6"), if every address host resolves to is public. host is
// an IP literal or a canonical DNS name (see [CanonicalHost]); any other
// spelling is refused rather than reinterpreted, so the name dialled is the
// name the caller matched.
//
// The error is a [*checkfu.Refusal] (destination_not_public,
// host_invalid, request_invalid) when policy forbids the connection, and a
// [*UpstreamError] when the connection was permitted but failed.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, checkfu.Refuse(CodeRequestInvalid, "egress: network %s is not tcp", checkfu.Quote(network))
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, checkfu.Refuse(CodeRequestInvalid, "egress: address %s is not host:port", checkfu.Quote(address))
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 || strconv.FormatUint(port, 10) != portText {
		return nil, checkfu.Refuse(CodeRequestInvalid, "egress: address %s has an invalid port", checkfu.Quote(address))
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		if h, err := CanonicalHost(host); err != nil || h != host {
			return nil, checkfu.Refuse(CodeHostInvalid, "egress: dial host %s is not a canonical DNS name", checkfu.Quote(host))
		}
		addrs, err = d.lookup(ctx, host)
		if err != nil {
			return nil, &UpstreamError{Code: CodeDNSFailed, Target: address, Err: err}
		}
		if len(addrs) == 0 {
			return nil, &UpstreamError{Code: CodeDNSFailed, Target: address, Err: errors.New("no addresses")}
		}
	}
	// One non-public answer refuses the whole name. This host's
	// addresses are read once for the dial, after resolution.
	own := d.host().current()
	for _, a := range addrs {
		if err := d.permit(host, netip.AddrPortFrom(a, uint16(port)), own); err != nil {
			return nil, err
		}
	}
	return d.dialAddrs(ctx, network, address, addrs, uint16(port), own)
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
		// Name the name matched, without the root dot, and the server
		// actually dialled: Go names resolv.conf's even when Dial went
		// to the configured one. With no resolver configured, Go's name
		// is the server dialDNS dialled.
		de2 := *de
		de2.Name = host
		if d.server != "" {
			de2.Server = d.server
		}
		err = &de2
	}
	return addrs, err
}

// dialAddrs connects to the first of addrs that accepts, each address
// checked again at connect time by control, all of them within the
// Dialer's timeout (see [connectShare]).
func (d *Dialer) dialAddrs(ctx context.Context, network, target string, addrs []netip.Addr, port uint16, own []netip.Addr) (net.Conn, error) {
	timeout := d.timeout
	if timeout == 0 {
		timeout = defaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	addrs = slices.DeleteFunc(slices.Clone(addrs), func(a netip.Addr) bool {
		return (network == "tcp4" && !a.Unmap().Is4()) || (network == "tcp6" && a.Unmap().Is4())
	})
	var last error
	for i, a := range addrs {
		nd := net.Dialer{Timeout: connectShare(time.Until(deadline), len(addrs)-i), ControlContext: d.control(own)}
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

// connectShare is the time the next of left addresses gets when left
// remains of the dial's timeout: an equal share, at least
// [minConnectShare], at most left.
func connectShare(remaining time.Duration, left int) time.Duration {
	share := remaining
	if left > 1 {
		share = remaining / time.Duration(left)
	}
	return min(max(share, minConnectShare), remaining)
}
