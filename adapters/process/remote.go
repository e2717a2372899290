package process

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

const (
	// RemoteName is the provider name of [Remote].
	RemoteName = "checkfu:process-wire-provider"
	// RemoteInputCredit is the stdin credit of Remote's wire servers:
	// smaller than one frame, so that a Runner (or wiretest) can overrun
	// it and see input_buffer_full.
	RemoteInputCredit = 64 << 10
)

// Remote is the process provider placed across acp/wire: each process
// runs under its own wire.Server on a Unix socket (mode 0600, the Runner
// authenticated by uid), and the Runner
// side drives it with adapters.OpenWire. It isolates nothing either; it
// exists so that the remote half of the contract (the credit window, the
// replay journal, the identity_only assurance) has a customer in this
// repository. The zero Remote is ready to use.
type Remote struct {
	// OutputWindow is each wire server's output_window_bytes; zero means
	// wire.DefaultOutputWindow.
	OutputWindow int
	// DetachGrace is each wire server's detach grace; zero means
	// wire.DefaultDetachGrace, negative none.
	DetachGrace time.Duration
}

var _ adapters.Provider = Remote{}

// Describe returns [Provider]'s declarations under [RemoteName], with
// the remote placement.
func (Remote) Describe() adapters.Description {
	d := Provider{}.Describe()
	d.Identity.Provider = RemoteName
	d.Placement = admission.PlacementRemote
	return d
}

// Create makes an instance with the refusals of [Provider.Create].
func (r Remote) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inner, err := Provider{}.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	in := inner.(*instance)
	in.ev.Provider = RemoteName
	sockets, err := os.MkdirTemp("", "checkfu-wire-")
	if err != nil {
		inner.Destroy(ctx)
		return nil, err
	}
	return &remoteInstance{inner: in, cfg: r, sockets: sockets}, nil
}

type remoteInstance struct {
	inner *instance
	cfg   Remote
	slot  adapters.Slot

	sockets string // the directory of the wire servers' Unix sockets

	mu        sync.Mutex // guards closed, servers, listeners, live and seq, and every conns.Add
	closed    bool
	servers   []*wire.Server
	listeners []net.Listener
	live      *remoteProcess
	seq       int
	conns     sync.WaitGroup // the accept loops and the connections they serve
}

var _ adapters.Wired = (*remoteInstance)(nil)

func (i *remoteInstance) ID() string { return i.inner.id }

// PrepareWire starts a wire.Server for spec on a Unix socket (mode
// 0600, its peer authenticated by uid) and returns its endpoint. The
// Server keeps its own one-process reservation; Destroy closes it.
func (i *remoteInstance) PrepareWire(ctx context.Context, spec adapters.ProcessSpec) (adapters.WireEndpoint, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return adapters.WireEndpoint{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "process: a process needs an argv")
	}
	i.mu.Lock()
	i.seq++
	path := filepath.Join(i.sockets, "wire-"+strconv.Itoa(i.seq)+".sock")
	i.mu.Unlock()
	ln, err := wire.Listen("unix", path)
	if err != nil {
		return adapters.WireEndpoint{}, err
	}
	dir := i.inner.dir
	s := &wire.Server{InputCredit: RemoteInputCredit, OutputWindow: i.cfg.OutputWindow, DetachGrace: i.cfg.DetachGrace, Command: func() *exec.Cmd {
		cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
		cmd.Dir = dir
		if spec.Dir != "" {
			cmd.Dir = spec.Dir
		}
		cmd.Env = env(dir, spec.Env)
		return cmd
	}}
	i.mu.Lock()
	if i.closed {
		i.mu.Unlock()
		ln.Close()
		return adapters.WireEndpoint{}, checkfu.Refuse(adapters.CodeInstanceDestroyed, "process: the instance was destroyed")
	}
	i.servers = append(i.servers, s)
	i.listeners = append(i.listeners, ln)
	i.conns.Add(1)
	i.mu.Unlock()
	go i.accept(s, ln)
	var d net.Dialer
	return adapters.WireEndpoint{Dial: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", path) }}, nil
}

// accept serves each connection of ln with s.ServeConn. It is its own
// loop rather than s.Serve, so that every goroutine is counted under
// i.mu before Destroy waits for them: Serve adds to its WaitGroup after
// Accept, unlocked, which races with a concurrent Server.Close.
func (i *remoteInstance) accept(s *wire.Server, ln net.Listener) {
	defer i.conns.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		i.mu.Lock()
		if i.closed {
			i.mu.Unlock()
			c.Close()
			return
		}
		i.conns.Add(1)
		i.mu.Unlock()
		go func() {
			defer i.conns.Done()
			s.ServeConn(c)
		}()
	}
}

// OpenProcess takes the instance's reservation, starts a wire.Server for
// spec and drives it with adapters.OpenWire; the reservation ends when
// Wait has returned.
func (i *remoteInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	if err := i.slot.Acquire(); err != nil {
		return nil, err
	}
	e, err := i.PrepareWire(ctx, spec)
	if err != nil {
		i.slot.Release()
		return nil, err
	}
	p := &remoteProcess{Process: adapters.OpenWire(ctx, e, i.inner.ev), slot: &i.slot}
	i.mu.Lock()
	i.live = p
	i.mu.Unlock()
	return p, nil
}

// Destroy closes every wire.Server (killing a live process) and removes
// the instance's directory.
func (i *remoteInstance) Destroy(ctx context.Context) error {
	if !i.slot.Destroy() {
		return nil
	}
	i.mu.Lock()
	i.closed = true
	servers, live, lns := i.servers, i.live, i.listeners
	i.servers, i.listeners = nil, nil
	i.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	if live != nil {
		// The Runner side would otherwise redial a closed server for
		// wire.DefaultReconnectWithin before Wait returned.
		live.Kill()
	}
	for _, s := range servers {
		s.Close()
	}
	i.conns.Wait()
	i.inner.proc.Destroy(ctx)
	os.RemoveAll(i.sockets)
	return removeDir(i.inner.dir)
}

type remoteProcess struct {
	adapters.Process
	slot *adapters.Slot
	once sync.Once
}

func (p *remoteProcess) Wait() (int, error) {
	st, err := p.Process.Wait()
	p.once.Do(p.slot.Release)
	return st, err
}
