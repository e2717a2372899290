package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/checkfu/checkfu/adapters"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// Defaults of [InstanceConfig], each applied when the field is zero.
const (
	DefaultMemoryBytes = 256 << 20
	DefaultPidsLimit   = 128
	DefaultNanoCPUs    = 1_000_000_000
	DefaultUser        = "65534:65534"
)

// Runtimes an instance can run under.
const (
	// RuntimeRunc is the engine's default OCI runtime: Linux namespaces,
	// cgroups, seccomp.
	RuntimeRunc = "runc"
	// RuntimeRunsc is gVisor: a user-space kernel between the workload
	// and the host. The engine must have it registered under this name.
	RuntimeRunsc = "runsc"
)

// InstanceConfig configures [Engine.CreateInstance]. The zero value of
// every isolation field means the strict default, never "off".
type InstanceConfig struct {
	// Image is the image reference, such as BusyboxImage's answer.
	// Required. It must already be in the engine: nothing is pulled.
	Image string
	// Runtime is RuntimeRunc (the default, when empty) or RuntimeRunsc.
	Runtime string
	// Allowlist, when set, puts the instance's processes on the
	// topology's internal network, behind its guard; nil means the
	// network policy "none": NetworkMode none, only a loopback interface.
	Allowlist *Allowlist
	// MemoryBytes is the memory limit (swap included); 0 means
	// DefaultMemoryBytes.
	MemoryBytes int64
	// PidsLimit bounds the processes and threads; 0 means
	// DefaultPidsLimit.
	PidsLimit int64
	// NanoCPUs is the CPU quota in billionths of a CPU; 0 means
	// DefaultNanoCPUs.
	NanoCPUs int64
	// User is the UID:GID processes run as; empty means DefaultUser.
	// Root ("0", "root", "0:...") is refused.
	User string
	// Env is added to every process's environment.
	Env []string
	// BrokerDir, when set, is an absolute host directory that only the
	// plane serves (the gateway broker's Unix socket is in it), bind-mounted
	// read-only at [BrokerMount] in every process. It is allowed only with
	// the network policy "none": the workload then reaches the broker's
	// socket and nothing else. Empty means no broker: capability-free code.
	BrokerDir string
}

// BrokerMount is where InstanceConfig.BrokerDir appears in a process.
const BrokerMount = "/run/checkfu"

// Evidence is what the engine reports about one process's container, read
// back from the engine after create and before start. Label is always
// checkfu.LabelIsolated: a real engine produced it.
type Evidence struct {
	Label         checkfu.Label
	Instance      string
	Container     string
	ImageID       string
	Runtime       string
	NetworkMode   string   // "none", or the topology's internal network
	Networks      []string // the networks the container is attached to, sorted
	EngineVersion string
	APIVersion    string

	MemoryBytes     int64
	MemorySwapBytes int64
	PidsLimit       int64
	NanoCPUs        int64
	ReadonlyRootfs  bool
	CapDrop         []string
	CapAdd          []string
	NoNewPrivileges bool
	User            string
	TmpfsTmp        string   // the tmpfs options of /tmp
	LogDriver       string   // "none": the engine keeps no copy of the output
	DNS             []string // upstream DNS servers of the embedded DNS (BlackholeDNS for allowlist)
	Binds           []string // bind mounts: the broker directory, read-only, or none
	PidMode         string   // "": a PID namespace of its own
	IpcMode         string   // "private": an IPC namespace of its own
	Privileged      bool
	ExtraMounts     []string // every mount besides the tmpfs /tmp, sorted; only the broker's bind mount is asked
}

// An Instance is one sandbox on a Docker engine: a fixed image, isolation
// and network. Each process runs in a fresh container of it, created,
// attached and waited for before it starts, and removed when it is
// reaped; nothing carries from one process to the next (the root is
// read-only and /tmp is a per-process tmpfs). At most one process lives
// at a time: the Instance keeps that reservation.
type Instance struct {
	e   *Engine
	id  string
	cfg InstanceConfig

	mu        sync.Mutex
	live      *Process // guarded by mu; the reserved process, until reaped
	destroyed bool     // guarded by mu
}

// CreateInstance validates cfg and returns an Instance. It checks that
// the image is in the engine (CodeImageMissing otherwise).
func (e *Engine) CreateInstance(ctx context.Context, cfg InstanceConfig) (*Instance, error) {
	if cfg.Image == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: an instance needs an image")
	}
	if cfg.Runtime == "" {
		cfg.Runtime = RuntimeRunc
	}
	if cfg.Runtime != RuntimeRunc && cfg.Runtime != RuntimeRunsc {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: runtime %s is not runc or runsc", checkfu.Quote(cfg.Runtime))
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = DefaultMemoryBytes
	}
	if cfg.PidsLimit == 0 {
		cfg.PidsLimit = DefaultPidsLimit
	}
	if cfg.NanoCPUs == 0 {
		cfg.NanoCPUs = DefaultNanoCPUs
	}
	if cfg.MemoryBytes < 6<<20 || cfg.PidsLimit < 1 || cfg.NanoCPUs < 1_000_000 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: limits out of range (memory %d bytes, at least 6 MiB; pids %d; nano CPUs %d)", cfg.MemoryBytes, cfg.PidsLimit, cfg.NanoCPUs)
	}
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if isRoot(cfg.User) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: user %s is root; processes run as a non-root UID", checkfu.Quote(cfg.User))
	}
	if cfg.BrokerDir != "" && (cfg.Allowlist != nil || !filepath.IsAbs(cfg.BrokerDir) || filepath.Clean(cfg.BrokerDir) != cfg.BrokerDir || strings.ContainsAny(cfg.BrokerDir, ":,")) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: a broker directory is a clean absolute path without ':' or ',', and only with the network policy none")
	}
	if _, err := e.c.InspectImage(ctx, cfg.Image); err != nil {
		return nil, err
	}
	var b [6]byte
	rand.Read(b[:])
	cfg.Env = slices.Clone(cfg.Env)
	return &Instance{e: e, id: "cfi-" + hex.EncodeToString(b[:]), cfg: cfg}, nil
}

// isRoot reports whether a Docker user spec names UID 0.
func isRoot(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u == "root" || strings.TrimLeft(u, "0") == "" && u != ""
}

// ID returns the instance's identifier, put on its containers as the
// label checkfu.instance.
func (i *Instance) ID() string { return i.id }

// ProcessSpec is one process to open.
type ProcessSpec struct {
	// Argv is the command and its arguments. Required.
	Argv []string
	// Env is added to the instance's environment.
	Env []string
	// Dir is the working directory; empty means the image's.
	Dir string
}

// Open starts a process: it creates the container, reads its isolation
// back from the engine and refuses (CodeIsolationMismatch) when it is not
// what was asked, attaches to its stdin, stdout and stderr, registers the
// exit wait, and only then starts it. A second Open while a process lives
// is refused with wire.CodeProcessAlreadyOpen; the reservation ends when
// the process is reaped (Wait has returned).
func (i *Instance) Open(ctx context.Context, spec ProcessSpec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: a process needs a command")
	}
	p := &Process{inst: i, done: make(chan struct{})}
	i.mu.Lock()
	switch {
	case i.destroyed:
		i.mu.Unlock()
		return nil, checkfu.Refuse(adapters.CodeInstanceDestroyed, "docker: instance %s is destroyed", i.id)
	case i.live != nil:
		i.mu.Unlock()
		return nil, checkfu.Refuse(wire.CodeProcessAlreadyOpen, "docker: instance %s already has a live process", i.id)
	}
	i.live = p
	i.mu.Unlock()
	if err := p.start(ctx, spec); err != nil {
		p.cleanup()
		i.release(p)
		return nil, err
	}
	go p.reap()
	return p, nil
}

// release ends p's reservation.
func (i *Instance) release(p *Process) {
	i.mu.Lock()
	if i.live == p {
		i.live = nil
	}
	i.mu.Unlock()
}

// Destroy kills and reaps the live process, if any, and refuses every
// later Open. It is idempotent.
func (i *Instance) Destroy(ctx context.Context) error {
	i.mu.Lock()
	i.destroyed = true
	p := i.live
	i.mu.Unlock()
	if p == nil {
		return nil
	}
	p.Kill()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hostConfig is the isolation every process container gets.
func (i *Instance) hostConfig() engine.HostConfig {
	pids := i.cfg.PidsLimit
	init := true
	hc := engine.HostConfig{
		NetworkMode:    "none",
		Runtime:        i.cfg.Runtime,
		IpcMode:        "private",
		Memory:         i.cfg.MemoryBytes,
		MemorySwap:     i.cfg.MemoryBytes,
		NanoCpus:       i.cfg.NanoCPUs,
		PidsLimit:      &pids,
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		Tmpfs:          map[string]string{"/tmp": tmpfsTmp},
		Init:           &init,
		// The engine keeps no copy of the workload's output: it streams
		// through the attach only (and a json-file log would cost the
		// stream most of its throughput).
		LogConfig: &engine.LogConfig{Type: "none"},
	}
	if i.cfg.BrokerDir != "" {
		hc.Binds = []string{i.cfg.BrokerDir + ":" + BrokerMount + ":ro"}
	}
	if i.cfg.Allowlist != nil {
		hc.NetworkMode = i.cfg.Allowlist.innerName
		// The workload needs no DNS (the guard resolves), so the embedded
		// DNS's upstream is a black hole: even on an engine started
		// without --dns and a host resolv.conf naming a loopback resolver
		// (CVE-2024-29018), it has nowhere to forward from the host's
		// namespace.
		hc.Dns = []string{BlackholeDNS}
	}
	return hc
}

// BlackholeDNS is the upstream DNS server given to allowlist workloads:
// an address in 198.18.0.0/15 (RFC 2544, never routed on the internet)
// outside every topology slot, where nothing answers.
const BlackholeDNS = "198.18.255.53"

// tmpfsTmp is the tmpfs /tmp of every process container.
const tmpfsTmp = "rw,noexec,nosuid,nodev,size=64m,mode=1777"

// A Process is one live process of an Instance. Read Stdout and Stderr
// both until EOF (like two OS pipes, a full one stalls the other), and
// call Wait to reap it.
type Process struct {
	inst      *Instance
	container string
	stream    *engine.Stream
	waiter    *engine.Waiter
	evidence  Evidence
	stdoutR   *io.PipeReader
	stderrR   *io.PipeReader

	done     chan struct{} // closed when reaped
	exitCode int           // set before done closes
	waitErr  error         // set before done closes
}

func (p *Process) start(ctx context.Context, spec ProcessSpec) error {
	i := p.inst
	c := i.e.c
	cfg := &engine.ContainerConfig{
		Image:        i.cfg.Image,
		Cmd:          spec.Argv,
		Entrypoint:   []string{},
		Env:          append(slices.Clone(i.cfg.Env), spec.Env...),
		User:         i.cfg.User,
		WorkingDir:   spec.Dir,
		Labels:       i.e.labels(map[string]string{"checkfu.instance": i.id}),
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true,
		HostConfig:   i.hostConfig(),
	}
	if a := i.cfg.Allowlist; a != nil {
		cfg.Labels["checkfu.network"] = a.innerID
		cfg.Env = append(cfg.Env, a.proxyEnv()...)
		cfg.NetworkingConfig = &engine.NetworkingConfig{EndpointsConfig: map[string]*engine.EndpointConfig{
			a.innerName: {IPAMConfig: &engine.IPAMConfig{IPv4Address: a.WorkloadAddr().String()}},
		}}
	}
	id, err := c.CreateContainer(ctx, "", cfg)
	if err != nil {
		return err
	}
	p.container = id
	info, err := c.InspectContainer(ctx, id)
	if err != nil {
		return err
	}
	p.evidence = evidenceOf(i, info)
	if err := checkIsolation(cfg.HostConfig, i.cfg.User, p.evidence); err != nil {
		return err
	}
	if p.stream, err = c.Attach(ctx, id); err != nil {
		return err
	}
	// ctx bounds the open, not the process: the wait outlives it (cleanup
	// closes it).
	if p.waiter, err = c.WaitNextExit(context.WithoutCancel(ctx), id); err != nil {
		return err
	}
	if err := c.StartContainer(ctx, id); err != nil {
		return err
	}
	var outW, errW *io.PipeWriter
	p.stdoutR, outW = io.Pipe()
	p.stderrR, errW = io.Pipe()
	go func() {
		err := engine.Demux(p.stream.Reader(), outW, errW)
		p.stream.Close()
		outW.CloseWithError(err)
		errW.CloseWithError(err)
	}()
	return nil
}

// evidenceOf reads a container's isolation as the engine reports it.
func evidenceOf(i *Instance, info *engine.ContainerJSON) Evidence {
	hc := info.HostConfig
	ev := Evidence{
		Label:           checkfu.LabelIsolated,
		Instance:        i.id,
		Container:       info.ID,
		ImageID:         info.Image,
		Runtime:         hc.Runtime,
		NetworkMode:     hc.NetworkMode,
		EngineVersion:   i.e.c.EngineVersion(),
		APIVersion:      i.e.c.APIVersion(),
		MemoryBytes:     hc.Memory,
		MemorySwapBytes: hc.MemorySwap,
		NanoCPUs:        hc.NanoCpus,
		ReadonlyRootfs:  hc.ReadonlyRootfs,
		CapDrop:         slices.Clone(hc.CapDrop),
		CapAdd:          slices.Clone(hc.CapAdd),
		NoNewPrivileges: slices.Contains(hc.SecurityOpt, "no-new-privileges") || slices.Contains(hc.SecurityOpt, "no-new-privileges:true"),
		User:            info.Config.User,
		TmpfsTmp:        hc.Tmpfs["/tmp"],
		LogDriver:       hc.LogConfig.Type,
		DNS:             slices.Clone(hc.Dns),
		Binds:           slices.Clone(hc.Binds),
		PidMode:         hc.PidMode,
		IpcMode:         hc.IpcMode,
		Privileged:      hc.Privileged,
	}
	if hc.PidsLimit != nil {
		ev.PidsLimit = *hc.PidsLimit
	}
	ev.ExtraMounts = append(ev.ExtraMounts, hc.Binds...)
	for _, m := range hc.Mounts {
		ev.ExtraMounts = append(ev.ExtraMounts, m.Target)
	}
	for _, m := range info.Mounts {
		ev.ExtraMounts = append(ev.ExtraMounts, m.Type+":"+m.Destination)
	}
	for p := range hc.Tmpfs {
		if p != "/tmp" {
			ev.ExtraMounts = append(ev.ExtraMounts, "tmpfs:"+p)
		}
	}
	sort.Strings(ev.ExtraMounts)
	for n := range info.NetworkSettings.Networks {
		ev.Networks = append(ev.Networks, n)
	}
	sort.Strings(ev.Networks)
	sort.Strings(ev.CapDrop)
	return ev
}

// checkIsolation compares what the engine reports with what was asked.
// askedMounts is the sorted ExtraMounts of a container made from want:
// the broker's bind mount, as asked and as the engine reports it, or none.
func askedMounts(want engine.HostConfig) []string {
	var m []string
	for _, b := range want.Binds {
		m = append(m, b)
		if parts := strings.Split(b, ":"); len(parts) >= 2 {
			m = append(m, "bind:"+parts[1])
		}
	}
	sort.Strings(m)
	return m
}

func checkIsolation(want engine.HostConfig, user string, ev Evidence) error {
	var bad []string
	check := func(ok bool, what string) {
		if !ok {
			bad = append(bad, what)
		}
	}
	check(ev.NetworkMode == want.NetworkMode, "network mode")
	// The network mode alone proves nothing: Docker 20.10 accepts
	// NetworkMode none with an endpoint on another network, attaches the
	// container to it, and still reports NetworkMode none.
	check(slices.Equal(ev.Networks, []string{want.NetworkMode}), "set of networks")
	check(ev.Runtime == want.Runtime, "runtime")
	check(ev.MemoryBytes == want.Memory && ev.MemorySwapBytes == want.MemorySwap, "memory limit")
	check(ev.PidsLimit == *want.PidsLimit, "pids limit")
	check(ev.NanoCPUs == want.NanoCpus, "cpu limit")
	check(ev.ReadonlyRootfs, "read-only root")
	check(slices.Equal(ev.CapDrop, []string{"ALL"}) && len(ev.CapAdd) == 0, "capabilities")
	check(ev.NoNewPrivileges, "no-new-privileges")
	check(ev.User == user && !isRoot(ev.User), "user")
	check(ev.TmpfsTmp == tmpfsTmp, "tmpfs /tmp")
	check(ev.LogDriver == want.LogConfig.Type, "log driver")
	check(slices.Equal(ev.DNS, want.Dns), "upstream DNS")
	check(slices.Equal(ev.Binds, want.Binds), "bind mounts")
	check(ev.PidMode == "" && ev.IpcMode == want.IpcMode && !ev.Privileged, "namespaces")
	check(slices.Equal(ev.ExtraMounts, askedMounts(want)), "set of mounts")
	if len(bad) > 0 {
		return checkfu.Refuse(CodeIsolationMismatch, "docker: the engine reports container %s with a different %s", ev.Container, strings.Join(bad, ", "))
	}
	return nil
}

// Stdin returns the process's stdin; Close sends EOF.
func (p *Process) Stdin() io.WriteCloser { return stdin{p.stream} }

type stdin struct{ s *engine.Stream }

func (w stdin) Write(b []byte) (int, error) { return w.s.Write(b) }
func (w stdin) Close() error                { return w.s.CloseWrite() }

// Stdout returns the process's stdout.
func (p *Process) Stdout() io.Reader { return p.stdoutR }

// Stderr returns the process's stderr.
func (p *Process) Stderr() io.Reader { return p.stderrR }

// Evidence returns what the engine reported about the process's
// container before it started.
func (p *Process) Evidence() Evidence {
	ev := p.evidence
	ev.CapDrop = slices.Clone(ev.CapDrop)
	ev.CapAdd = slices.Clone(ev.CapAdd)
	ev.Networks = slices.Clone(ev.Networks)
	ev.DNS = slices.Clone(ev.DNS)
	ev.ExtraMounts = slices.Clone(ev.ExtraMounts)
	return ev
}

// Kill sends SIGKILL to the process. Killing a process that has exited
// is not an error.
func (p *Process) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.inst.e.c.KillContainer(ctx, p.container, "KILL")
	if err != nil && (errors.Is(err, CodeEngineRequestFailed) || errors.Is(err, CodeEngineObjectMissing)) {
		// The engine refuses to kill a container that is not running
		// (409 on some versions, 500 on others): it has exited.
		select {
		case <-p.done:
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	if errors.Is(err, CodeEngineNameConflict) {
		return nil
	}
	return err
}

// Wait waits for the process to exit and be reaped, and returns its exit
// code (128+N for signal N, so 137 after Kill). After Wait returns, the
// instance accepts a new Open.
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.exitCode, p.waitErr
}

// Done returns a channel closed once the process is reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// reap waits for the exit, removes the container and ends the
// reservation.
func (p *Process) reap() {
	code, err := p.waiter.Wait()
	p.exitCode, p.waitErr = code, err
	p.cleanup()
	p.inst.release(p)
	close(p.done)
}

// cleanup removes the container and closes the stream.
func (p *Process) cleanup() {
	if p.waiter != nil {
		p.waiter.Close()
	}
	if p.container != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		p.inst.e.c.RemoveContainer(ctx, p.container, true)
		cancel()
	}
	if p.stream != nil {
		// The engine ends the stream when the container stops, and the
		// demultiplexer closes it then; this bounds an engine that does
		// not.
		time.AfterFunc(5*time.Second, func() { p.stream.Close() })
	}
}
