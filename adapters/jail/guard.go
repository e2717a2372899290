package jail

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// RelayPort is the loopback port of an allowlist jail's relay: the
// workload's proxy (http_proxy and https_proxy name it) and its only way
// out.
const RelayPort = 3128

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
// a Unix socket in a directory only the Runner's user may enter.
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
		dir, err := os.MkdirTemp("", "checkfu-jail-guard-")
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
		done := make(chan struct{})
		go func() {
			defer close(done)
			forward(front, ln.Addr().String())
		}()
		var once sync.Once
		var stopErr error
		stop := func() error {
			once.Do(func() {
				front.Close()
				<-done
				stopErr = g.Shutdown(context.WithoutCancel(ctx))
				if errors.Is(stopErr, net.ErrClosed) {
					stopErr = nil
				}
				stopErr = errors.Join(stopErr, os.RemoveAll(dir))
			})
			return stopErr
		}
		return sock, stop, nil
	}
}

// forward carries each connection of front to the TCP address to, until
// front is closed, then waits for the connections it carries.
func forward(front net.Listener, to string) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := front.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			u, err := net.Dial("tcp", to)
			if err != nil {
				return
			}
			defer u.Close()
			splice(c, u)
		}()
	}
}

// splice copies both ways between a and b, half-closing each direction
// at its end, and returns when both are done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}
