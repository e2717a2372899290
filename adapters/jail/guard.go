package jail

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/egress"
)

// RelayPort is the loopback port of an allowlist jail's relay: the
// workload's proxy (http_proxy and https_proxy name it) and its only way
// out.
const RelayPort = 3128

// guardDirPrefix begins the name of a [LocalGuard]'s socket directory
// in the temporary directory, followed by the Runner's owner name (its
// pid and PID namespace, see deadowner) and "-": a dead Runner's are
// known by it (sweepGuardDirs, on Linux).
const guardDirPrefix = "checkfu-jail-guard-"

// A GuardFunc starts the egress guard of one allowlist instance, which
// allows exactly hosts, listening on a Unix socket outside every jail.
// It returns the socket's path and a function that stops the guard. The
// relay of each of the instance's jails forwards every connection to
// that socket, so the guard decides every request.
type GuardFunc func(ctx context.Context, hosts []egress.HostPort) (socket string, stop func() error, err error)

// GuardOptions configures [LocalGuard].
type GuardOptions struct {
	// Resolver is the "ip:port" of the DNS server the guard resolves
	// with; empty means the system resolver.
	Resolver string
	// TreatAsPublicForTesting marks test blocks as public for the guard
	// (egress.GuardConfig); never set it outside tests.
	TreatAsPublicForTesting []netip.Prefix
	// Logger receives the guard's refusals; nil means slog.Default().
	Logger *slog.Logger
	// Addr is the "ip:port" on the host's loopback the guard's own TCP
	// listener binds, behind its Unix socket; empty means a free port.
	// With a fixed port only one allowlist instance runs at a time.
	Addr string
}

// LocalGuard returns a GuardFunc that runs, for each allowlist
// instance, the reference guard (egress.Guard, what `checkfu guard`
// runs) in this process, enforcing exactly the instance's hosts, behind
// a Unix socket in a directory only the Runner's user may enter. Its
// stop returns within about [GuardStopGrace], whatever the connections
// it relays do.
func LocalGuard(o GuardOptions) GuardFunc {
	return func(ctx context.Context, hosts []egress.HostPort) (string, func() error, error) {
		addr := o.Addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			return "", nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: the guard's address %s is not ip:port on loopback", checkfu.Quote(addr))
		}
		doc, err := json.Marshal(struct {
			Type         string            `json:"type"`
			AllowedHosts []egress.HostPort `json:"allowed_hosts"`
		}{"allowlist", hosts})
		if err != nil {
			return "", nil, err
		}
		policy, err := egress.ParseNetworkPolicy(doc)
		if err != nil {
			return "", nil, err
		}
		compiled, err := policy.Compile(nil)
		if err != nil {
			return "", nil, err
		}
		// The guard listens on the host's loopback, where no jail can
		// reach (each has a network namespace of its own); the Unix
		// socket in front of it is the relays' way in.
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", nil, err
		}
		g, err := egress.NewGuard(egress.GuardConfig{Policy: compiled, Listener: ln, Resolver: o.Resolver,
			TreatAsPublicForTesting: o.TreatAsPublicForTesting, Logger: o.Logger})
		if err != nil {
			ln.Close()
			return "", nil, err
		}
		dir, err := os.MkdirTemp("", guardDirPrefix+deadowner.Self()+"-")
		if err != nil {
			ln.Close()
			return "", nil, err
		}
		sock := filepath.Join(dir, "guard.sock")
		front, err := net.Listen("unix", sock)
		if err != nil {
			ln.Close()
			os.RemoveAll(dir)
			return "", nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: guard socket: %v", err)
		}
		go g.Serve()
		to := ln.Addr().String()
		d := &net.Dialer{Timeout: relayDialTimeout}
		r := startRelay(front, 0, func(ctx context.Context) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", to)
		})
		var once sync.Once
		var stopErr error
		stop := func() error {
			once.Do(func() { stopErr = stopGuard(ctx, r, g, dir) })
			return stopErr
		}
		return sock, stop, nil
	}
}

// stopGuard stops a guard of [LocalGuard] within about [GuardStopGrace]:
// its socket takes no more connections; the guard finishes the requests
// in flight and the relay waits for the connections it carries, both
// until the grace is over; then the relay closes what is left, both
// sides, and the guard its tunnels. A request the grace cut is no error
// of the stop. The guard's own deadline is a backstop: it ends each
// request whose workload connection closes, so by then none is left
// (no test can hold one past the relay's close).
func stopGuard(ctx context.Context, r *relay, g *egress.Guard, dir string) error {
	grace := time.NewTimer(GuardStopGrace)
	defer grace.Stop()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), GuardStopGrace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- g.Shutdown(sctx) }()
	r.stop(grace.C)
	err := <-shut
	if errors.Is(err, net.ErrClosed) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return errors.Join(err, os.RemoveAll(dir))
}
