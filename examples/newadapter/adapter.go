//go:build unix

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// The scratch provider runs each instance's processes as local processes
// of the host, in the instance's own temporary directory, with a cleared
// environment. That is hygiene, not isolation: the processes share the
// host's filesystem, network, users and process table. So it enforces no
// axis, advertises no egress grade, offers only the unrestricted network
// mode, and labels its evidence mock.
const (
	scratchName     = "example:scratch-provider"
	scratchRevision = "1"
	scratchMat      = "scratch-1"          // names the code in this file
	scratchNetwork  = "unrestricted"       // a local process has the host's network
	scratchPath     = "PATH=/usr/bin:/bin" // fixed, not the Runner's PATH
)

var scratchPlatform = runtime.GOOS + "/" + runtime.GOARCH

// scratch is the provider. The zero value is ready to use.
type scratch struct{}

var _ adapters.Provider = scratch{}

// Describe declares everything about the provider, in one value: who it
// is, where it runs, what it can do and enforce, its optional members
// (none) and the gaps in its processes (none). adapters.Check and the
// suite hold it to every word.
func (scratch) Describe() adapters.Description {
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: scratchName, Revision: scratchRevision},
		MaterializationRevision: scratchMat,
		// In-process: the Runner itself runs this code, so the capability
		// below is a constant it compiled in, and MatchEvidence's
		// enforcement clause compares against a fact it holds.
		Placement: admission.PlacementInProcess,
		Capability: admission.RunnerProviderCapability{
			Drivers:      []string{"process"},
			LaunchKinds:  []string{"process"},
			Platforms:    []string{scratchPlatform},
			NetworkModes: []string{scratchNetwork},
			// Enforcement: the zero value, unenforced on all nine axes.
			// Claiming any axis here would be a lie the Runner believes.
			EgressCertification: checkfu.Unsupported,
		},
	}
}

// Create makes an instance: a fresh private directory. It refuses what it
// cannot apply (an image, another platform or network mode, any limit)
// rather than ignoring it.
func (p scratch) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	switch {
	case spec.ID == "":
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "scratch: an instance needs an ID")
	case spec.RootImage != "":
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "scratch: no root image can be applied (asked %s)", checkfu.Quote(spec.RootImage))
	case spec.Platform != scratchPlatform:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "scratch: platform %s is not the host's", checkfu.Quote(spec.Platform))
	case spec.NetworkMode != scratchNetwork:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "scratch: network mode %s cannot be applied", checkfu.Quote(spec.NetworkMode))
	case spec.Limits != adapters.Limits{}:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "scratch: resource limits cannot be applied")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "checkfu-scratch-")
	if err != nil {
		return nil, err
	}
	d := p.Describe()
	// The evidence states what this instance is, field by field, for
	// MatchEvidence to bind to what the Runner asked for.
	ev := adapters.Evidence{
		Label:    checkfu.LabelMock, // a local process: never isolated, never production
		Instance: spec.ID, Provider: scratchName, ProviderRevision: scratchRevision,
		MaterializationRevision: scratchMat, Platform: scratchPlatform,
		ProfileDigest: spec.ProfileDigest, NetworkMode: scratchNetwork,
		Networks: []string{"host"}, Enforcement: d.Capability.Enforcement,
	}
	return &instance{id: spec.ID, dir: dir, ev: ev}, nil
}

// An instance is one scratch directory and at most one live process.
type instance struct {
	id   string
	dir  string
	ev   adapters.Evidence
	slot adapters.Slot // the one-live-process reservation

	mu    sync.Mutex // guards live and procs
	live  *process
	procs []*process // every process opened, so Destroy can close their pipes
}

func (i *instance) ID() string { return i.id }

func (i *instance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "scratch: a process needs an argv")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := i.slot.Acquire(); err != nil { // process_already_open, or instance_destroyed
		return nil, err
	}
	p, err := i.start(spec)
	if err != nil {
		i.slot.Release()
		return nil, err
	}
	return p, nil
}

// Destroy kills the live process, waits until it is reaped, closes every
// pipe and removes the directory. Only the first call does anything.
func (i *instance) Destroy(ctx context.Context) error {
	if !i.slot.Destroy() {
		return nil
	}
	i.mu.Lock()
	live, procs := i.live, i.procs
	i.procs = nil
	i.mu.Unlock()
	if live != nil {
		live.Kill()
		select {
		case <-live.reaped:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, p := range procs {
		p.stdin.Close()
		p.stdout.Close()
		p.stderr.Close()
	}
	return os.RemoveAll(i.dir)
}

// A process is one local process and its three pipes.
type process struct {
	cmd                   *exec.Cmd
	stdin, stdout, stderr *os.File
	ev                    adapters.Evidence

	mu     sync.Mutex // guards exited, so Kill never signals a reaped group
	exited bool
	reaped chan struct{} // closed once reaped; status and err are set then
	status int
	err    error
}

func (i *instance) start(spec adapters.ProcessSpec) (*process, error) {
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = i.dir
	if spec.Dir != "" {
		cmd.Dir = spec.Dir
	}
	// A cleared environment: nothing of the Runner's own reaches the
	// process, only a fixed PATH, the scratch directory and spec.Env.
	cmd.Env = append([]string{scratchPath, "HOME=" + i.dir, "TMPDIR=" + i.dir}, spec.Env...)
	// Its own process group, so Kill reaches the children it starts.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var ends [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for k := 0; k < 6; k += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range ends[:k] {
				f.Close()
			}
			return nil, err
		}
		ends[k], ends[k+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	err := cmd.Start()
	ends[0].Close() // the child's ends: only the child holds them now
	ends[3].Close()
	ends[5].Close()
	if err != nil {
		ends[1].Close()
		ends[2].Close()
		ends[4].Close()
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		return nil, checkfu.Refuse(wire.CodeProcessStartFailed, "scratch: %s did not start: %v", checkfu.Quote(spec.Argv[0]), cause)
	}
	p := &process{cmd: cmd, stdin: ends[1], stdout: ends[2], stderr: ends[4], ev: i.ev, reaped: make(chan struct{})}
	i.mu.Lock()
	i.live = p
	i.procs = append(i.procs, p)
	i.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exited = true
		p.mu.Unlock()
		p.status, p.err = exitStatus(cmd, err)
		i.mu.Lock()
		if i.live == p {
			i.live = nil
		}
		i.mu.Unlock()
		i.slot.Release() // only now: the reservation ends when the process is reaped
		close(p.reaped)
	}()
	return p, nil
}

func (p *process) Stdin() io.WriteCloser       { return p.stdin }
func (p *process) Stdout() io.Reader           { return p.stdout }
func (p *process) Stderr() io.Reader           { return p.stderr }
func (p *process) Evidence() adapters.Evidence { return p.ev }

func (p *process) Wait() (int, error) {
	<-p.reaped
	return p.status, p.err
}

// Kill sends SIGKILL to the whole process group, unless it was reaped
// (its group id could then be someone else's).
func (p *process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	return nil
}

// exitStatus is the exit code, or 128+signal.
func exitStatus(cmd *exec.Cmd, err error) (int, error) {
	if cmd.ProcessState == nil {
		return -1, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}
