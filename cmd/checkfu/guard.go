package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

func init() {
	register(&command{
		name:    "guard",
		summary: "run the workload egress guard, a forward proxy enforcing a network policy",
		run:     runGuard,
	})
}

// prefixList is a repeatable -treat-as-public flag.
type prefixList []netip.Prefix

func (p *prefixList) String() string {
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *prefixList) Set(v string) error {
	x, err := netip.ParsePrefix(v)
	if err != nil {
		return fmt.Errorf("%q is not a CIDR block", v)
	}
	*p = append(*p, x)
	return nil
}

// resolverAddress turns -resolver's host:port into the ip:port the guard
// dials. An IP address is used as given; a host name is looked up once,
// now, and its first address is used for the life of the guard (the
// guard's own lookups never go through the system resolver). Empty stays
// empty: the system resolver.
func resolverAddress(ctx context.Context, hostport string, lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)) (string, error) {
	if hostport == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(hostport)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil || n == 0 {
		return "", fmt.Errorf("-resolver %q is not host:port with a port from 1 to 65535", hostport)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return hostport, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, "ip", host)
	if err != nil {
		return "", fmt.Errorf("-resolver %q: looking up %q: %w", hostport, host, err)
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("-resolver %q: %q has no address", hostport, host)
	}
	return net.JoinHostPort(addrs[0].Unmap().String(), port), nil
}

// guardHints are the hints for the refusals the guard command can meet,
// chosen by the refusal's code, wherever it arises.
var guardHints = map[checkfu.Code]string{
	egress.CodePolicyInvalid:  "fix the policy file: exactly one of {\"type\":\"none\"}, {\"type\":\"unrestricted\"} or {\"type\":\"allowlist\",\"allowed_hosts\":[\"host[:port]\",...]}",
	egress.CodeAllowlistEmpty: "an allowlist must name somewhere to reach: list allowed_hosts, or set allow_package_managers",
	checkfu.CodeConfigInvalid: "-treat-as-public accepts only blocks inside 127.0.0.0/8, ::1/128, 198.18.0.0/15 or 2001:2::/48, and -resolver an ip:port",
}

// guardHint adds the hint for err's refusal code, if it has one; any
// other error is returned as it is.
func guardHint(err error) error {
	if code, ok := checkfu.CodeOf(err); ok {
		if h, ok := guardHints[code]; ok {
			return withHint(err, h)
		}
	}
	return err
}

// guardMaxPolicyFile bounds what "checkfu guard" reads of -policy: the
// size of policy document egress.ParseNetworkPolicy accepts (64 KiB).
// One byte more is read and refused, so a device (/dev/zero) or a pipe
// that never ends is never read whole.
const guardMaxPolicyFile = 64 << 10

// guardShutdownGrace bounds how long a stopping guard waits for requests
// in flight.
const guardShutdownGrace = 10 * time.Second

func runGuard(e *env, args []string) error {
	fs := newFlagSet(e, "guard", "-listen ADDR -policy FILE [-resolver HOST:PORT] [-treat-as-public CIDR]...")
	listen := fs.String("listen", "", "`address` to listen on, such as 127.0.0.1:3128 (port 0 picks a free port)")
	policyFile := fs.String("policy", "", "network policy JSON `file`: {\"type\":\"none\"|\"unrestricted\"|\"allowlist\",...}")
	resolver := fs.String("resolver", "", "DNS server `host:port` to resolve with; a host name is resolved once, at start, by the system resolver (default: the system resolver)")
	var testBlocks prefixList
	fs.Var(&testBlocks, "treat-as-public", "TESTING ONLY: treat this loopback or 198.18.0.0/15 `CIDR` as public (repeatable; logged)")
	logFormat := fs.String("log-format", "text", "the log on stderr: text (slog's key=value lines) or json (one object per line)")
	maxConns := fs.Int("max-connections", 0, "workload connections held at once, idle ones included (0: derived from RLIMIT_NOFILE, at most egress.DefaultMaxConnections)")
	maxTunnels := fs.Int("max-tunnels", 0, "CONNECT tunnels open at once (0: derived from RLIMIT_NOFILE, at most egress.DefaultMaxTunnels)")
	maxPerSource := fs.Int("max-tunnels-per-source", 0, "CONNECT tunnels open at once per workload source address (0: derived from RLIMIT_NOFILE, at most egress.DefaultMaxTunnelsPerSource)")
	maxIdle := fs.Int("max-idle-connections", 0, "workload connections held idle at once: keep-alives between requests, tunnels silent for egress.DefaultTunnelIdleAfter or closing; past it, or at a cap, the longest idle is closed (0: a quarter of -max-connections)")
	cpuProfile := fs.String("cpuprofile", "", "BENCHMARKING: write a CPU profile of the guard to `file`, from start until shutdown")
	metricsListen := fs.String("metrics-listen", "", "`address` to serve the guard's metrics on, at /metrics in the Prometheus text format (tunnels and connections held, their limits, and refusals answered; no request content); empty: none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("checkfu guard takes no arguments (got %q)", fs.Arg(0))
	}
	if *logFormat != "text" && *logFormat != "json" {
		return usagef("checkfu guard: -log-format must be text or json (got %s)", checkfu.Quote(*logFormat))
	}
	if *listen == "" || *policyFile == "" {
		return usagef("checkfu guard needs -listen and -policy")
	}
	doc, err := readBounded("-policy", *policyFile, guardMaxPolicyFile)
	if err != nil {
		return withHint(err, "pass -policy a readable JSON file of at most 64 KiB, such as {\"type\":\"unrestricted\"}")
	}
	policy, err := egress.ParseNetworkPolicy(doc)
	if err != nil {
		return guardHint(err)
	}
	compiled, err := policy.Compile(nil)
	if err != nil {
		return guardHint(err)
	}
	var log *slog.Logger
	if *logFormat == "json" {
		log = slog.New(slog.NewJSONHandler(e.stderr, nil))
	} else {
		log = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	resolverAddr, err := resolverAddress(context.Background(), *resolver, net.DefaultResolver.LookupNetIP)
	if err != nil {
		return withHint(err, "pass -resolver the host:port of a DNS server, such as 198.18.0.53:53 or dns.internal:53")
	}
	if resolverAddr != *resolver {
		log.Info("checkfu guard: resolver", "name", *resolver, "address", resolverAddr)
	}
	var meters metric.MeterProvider
	var metricsAddr net.Addr
	if *metricsListen != "" {
		mp, addr, stop, err := serveMetrics(*metricsListen)
		if err != nil {
			return withHint(err, "choose a free -metrics-listen address")
		}
		defer stop()
		meters, metricsAddr = mp, addr
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return withHint(err, "choose a free -listen address")
	}
	g, err := egress.NewGuard(egress.GuardConfig{
		Policy:                  compiled,
		Listener:                ln,
		Resolver:                resolverAddr,
		TreatAsPublicForTesting: testBlocks,
		Logger:                  log,
		MaxConnections:          *maxConns,
		MaxTunnels:              *maxTunnels,
		MaxTunnelsPerSource:     *maxPerSource,
		MaxIdleConnections:      *maxIdle,
		MeterProvider:           meters,
	})
	if err != nil {
		ln.Close()
		return guardHint(err)
	}
	if *cpuProfile != "" {
		f, err := createProfile(*cpuProfile)
		if err != nil {
			ln.Close()
			return withHint(err, "pass -cpuprofile the path of a regular file this user may write, not a link, pipe or device")
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			ln.Close()
			return err
		}
		defer pprof.StopCPUProfile()
	}
	log.Info("checkfu guard: policy", "type", string(compiled.Type()), "allowed_hosts", len(compiled.AllowedHosts()), "preset_catalog_version", compiled.PresetCatalogVersion())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- g.Serve() }()
	fmt.Fprintf(e.stdout, "listening on %s\n", ln.Addr())
	if metricsAddr != nil {
		fmt.Fprintf(e.stdout, "metrics on http://%s/metrics\n", metricsAddr)
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("checkfu guard: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), guardShutdownGrace)
	defer cancel()
	err = g.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// createProfile creates or truncates the regular file at path for
// -cpuprofile, mode 0600. A path is often in a shared directory (/tmp),
// where a local stranger may plant a link to a file of the operator's,
// or a pipe: a final link is refused (O_NOFOLLOW) instead of followed,
// a pipe without a reader is refused at once (O_NONBLOCK) instead of
// waited on, and anything but a regular file is refused.
func createProfile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkfu guard: -cpuprofile: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu guard: -cpuprofile %s is not a regular file", checkfu.Quote(path))
	}
	return f, nil
}

// metricsReadTimeout bounds how long the metrics listener waits for a
// scraper's request.
const metricsReadTimeout = 10 * time.Second

// serveMetrics serves a meter provider's metrics on addr, at /metrics,
// in the Prometheus text format, through the OpenTelemetry Prometheus
// exporter; stop shuts the listener and the provider down.
func serveMetrics(addr string) (mp metric.MeterProvider, at net.Addr, stop func(), err error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, nil, err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		provider.Shutdown(context.Background())
		return nil, nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: metricsReadTimeout, ReadTimeout: metricsReadTimeout}
	go srv.Serve(ln)
	return provider, ln.Addr(), func() {
		srv.Close()
		provider.Shutdown(context.Background())
	}, nil
}
