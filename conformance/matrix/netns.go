package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// The namespace topology is the owned topology of the network-namespace
// variant (the jail's): one network namespace the matrix creates, joined
// to the host's namespace by one veth pair. The host end holds
// nsTopoHost; the namespace end holds every destination address (the
// public-looking target, the private one, the owned DNS). The
// destinations are sockets this process opens inside the namespace, so
// they are ordinary listeners recording what reaches them.

// nsRange is the range the namespace topology takes its /24 from: the
// upper half of testRange, which Docker's topology slots (198.18.x)
// never use.
var nsRange = netip.MustParsePrefix("198.19.0.0/16")

// The first and last third octets the namespace topology tries.
const (
	nsMinSubnet = 1
	nsMaxSubnet = 254
)

// nsTopoHost is the last byte of the host end's address.
const nsTopoHost = 1

// ipTimeout bounds one ip(8) command.
const ipTimeout = 20 * time.Second

// An nsTopology is one owned network namespace and its veth pair.
type nsTopology struct {
	name   string // the namespace, under /run/netns
	hostIf string // the host end of the veth pair
	prefix netip.Prefix
	ns     *os.File // the namespace, held open

	mu      sync.Mutex
	closers []func() error // guarded by mu; what was opened inside
}

// newNSTopology creates a namespace with the veth pair, the host end on
// the first free /24 of nsRange, and the namespace end holding one
// address for each last byte of inside. A subnet whose veth name is
// taken, or whose /24 any host interface already holds, is skipped.
func newNSTopology(ctx context.Context, inside ...byte) (_ *nsTopology, err error) {
	used := map[byte]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && nsRange.Contains(p.Addr().Unmap()) {
				used[p.Addr().Unmap().As4()[2]] = true
			}
		}
	}
	first := nsMinSubnet + os.Getpid()%(nsMaxSubnet-nsMinSubnet+1)
	for i := 0; i <= nsMaxSubnet-nsMinSubnet; i++ {
		n := byte(nsMinSubnet + (first-nsMinSubnet+i)%(nsMaxSubnet-nsMinSubnet+1))
		if used[n] {
			continue
		}
		t := &nsTopology{
			name:   fmt.Sprintf("checkfu-mx-%d-%d", os.Getpid(), n),
			hostIf: fmt.Sprintf("cfmx%d", n),
			prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, n, 0}), 24),
		}
		if err := ipCmd(ctx, "netns", "add", t.name); err != nil {
			return nil, err
		}
		// The veth's name is the claim on the subnet: a second run
		// picking the same one fails here and moves on.
		if err := ipCmd(ctx, "link", "add", t.hostIf, "type", "veth", "peer", "name", "cfmxns", "netns", t.name); err != nil {
			t.hostIf = ""
			cerr := t.close()
			if strings.Contains(err.Error(), "exists") && cerr == nil {
				continue
			}
			return nil, errors.Join(err, cerr)
		}
		if err := t.build(ctx, inside); err != nil {
			return nil, errors.Join(err, t.close())
		}
		return t, nil
	}
	return nil, checkfu.Refuse(CodeTopologyFailed, "matrix: no free /24 in %s for the namespace topology", nsRange)
}

func (t *nsTopology) build(ctx context.Context, inside []byte) error {
	f, err := os.Open("/run/netns/" + t.name)
	if err != nil {
		return err
	}
	t.ns = f
	steps := [][]string{
		{"addr", "add", netip.PrefixFrom(t.at(nsTopoHost), 24).String(), "dev", t.hostIf},
		{"link", "set", t.hostIf, "up"},
		{"-n", t.name, "link", "set", "lo", "up"},
		{"-n", t.name, "link", "set", "cfmxns", "up"},
	}
	for _, b := range inside {
		steps = append(steps, []string{"-n", t.name, "addr", "add", netip.PrefixFrom(t.at(b), 24).String(), "dev", "cfmxns", "nodad"})
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// at returns the address of the topology's /24 whose last byte is n.
func (t *nsTopology) at(n byte) netip.Addr {
	b := t.prefix.Addr().As4()
	b[3] = n
	return netip.AddrFrom4(b)
}

// inside runs f on a thread that has joined the namespace; sockets f
// opens stay in the namespace. The thread is never returned to the
// runtime: it exits with f's goroutine.
func (t *nsTopology) inside(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := joinNetns(t.ns); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

// listenTCP opens a TCP listener on addr inside the namespace.
func (t *nsTopology) listenTCP(addr string) (net.Listener, error) {
	var ln net.Listener
	err := t.inside(func() (err error) { ln, err = net.Listen("tcp4", addr); return err })
	if err != nil {
		return nil, err
	}
	t.onClose(ln.Close)
	return ln, nil
}

// listenUDP opens a UDP socket on addr inside the namespace.
func (t *nsTopology) listenUDP(addr string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := t.inside(func() (err error) { pc, err = net.ListenPacket("udp4", addr); return err })
	if err != nil {
		return nil, err
	}
	t.onClose(pc.Close)
	return pc, nil
}

func (t *nsTopology) onClose(f func() error) {
	t.mu.Lock()
	t.closers = append(t.closers, f)
	t.mu.Unlock()
}

// close closes what was opened inside, deletes the veth pair and the
// namespace, and reports anything left.
func (t *nsTopology) close() error {
	t.mu.Lock()
	closers := t.closers
	t.closers = nil
	t.mu.Unlock()
	for _, c := range closers {
		c()
	}
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	var errs []error
	if t.hostIf != "" {
		if err := ipCmd(ctx, "link", "del", t.hostIf); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	if t.ns != nil {
		t.ns.Close()
	}
	if err := ipCmd(ctx, "netns", "del", t.name); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat("/run/netns/" + t.name); err == nil {
		errs = append(errs, fmt.Errorf("namespace %s is still there", t.name))
	}
	if _, err := net.InterfaceByName(t.hostIf); t.hostIf != "" && err == nil {
		errs = append(errs, fmt.Errorf("interface %s is still there", t.hostIf))
	}
	return errors.Join(errs...)
}

// ipCmd runs ip(8) with args.
func ipCmd(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return checkfu.Refuse(CodeTopologyFailed, "matrix: ip %s: %v: %s", strings.Join(args, " "), err, checkfu.Quote(strings.TrimSpace(out.String())))
	}
	return nil
}
