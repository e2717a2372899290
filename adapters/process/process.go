package process

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// The provider's identity.
const (
	// Name is the provider name.
	Name = "checkfu:process-provider"
	// Revision is the provider revision.
	Revision = "1"
	// MaterializationRevision names this package's materialization code.
	MaterializationRevision = "process-1"
	// NetworkMode is the one network mode it offers: the host's own
	// network, unrestricted.
	NetworkMode = "unrestricted"
)

// Platform is the host's OS/architecture pair, the one platform offered.
var Platform = runtime.GOOS + "/" + runtime.GOARCH

// A Provider runs each instance's processes as plain local processes.
// The zero Provider is ready to use.
type Provider struct{}

var _ adapters.Provider = Provider{}

// New returns the process provider.
func New() Provider { return Provider{} }

// Describe returns the provider's declarations: in-process placement,
// no enforcement on any axis, grade unsupported, network mode
// unrestricted only, the host platform, no optional member.
func (Provider) Describe() adapters.Description {
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: Name, Revision: Revision},
		MaterializationRevision: MaterializationRevision,
		Placement:               admission.PlacementInProcess,
		Capability: admission.RunnerProviderCapability{
			Drivers:             []string{"process"},
			LaunchKinds:         []string{"process"},
			Platforms:           []string{Platform},
			NetworkModes:        []string{NetworkMode},
			EgressCertification: checkfu.Unsupported,
		},
	}
}

// Spec returns the one InstanceSpec the provider accepts for id and
// profile digest: no image, the host platform, the unrestricted network
// mode, no limits.
func Spec(id, profileDigest string) adapters.InstanceSpec {
	return adapters.InstanceSpec{ID: id, Platform: Platform, ProfileDigest: profileDigest, NetworkMode: NetworkMode}
}

// Create makes an instance: a fresh private working directory. It
// refuses an empty ID with checkfu.CodeConfigInvalid, and a root image,
// another platform or network mode, or any limit with
// adapters.CodeSpecUnsupported: a plain process can apply none of them.
func (p Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "process: an instance needs an ID")
	}
	switch {
	case spec.RootImage != "":
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "process: no root image can be applied (asked %s)", checkfu.Quote(spec.RootImage))
	case spec.Platform != Platform:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "process: platform %s is not the host's %s", checkfu.Quote(spec.Platform), Platform)
	case spec.NetworkMode != NetworkMode:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "process: network mode %s cannot be applied; a plain process has the host's network", checkfu.Quote(spec.NetworkMode))
	case spec.Limits != adapters.Limits{}:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "process: resource limits cannot be applied")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "checkfu-process-")
	if err != nil {
		return nil, err
	}
	d := p.Describe()
	ev := adapters.Evidence{
		Label: checkfu.LabelMock, Instance: spec.ID,
		Provider: d.Identity.Provider, ProviderRevision: d.Identity.Revision,
		MaterializationRevision: d.MaterializationRevision,
		Platform:                Platform, ProfileDigest: spec.ProfileDigest, NetworkMode: NetworkMode,
		Networks: []string{"host"}, Enforcement: d.Capability.Enforcement,
	}
	return &instance{id: spec.ID, dir: dir, ev: ev}, nil
}

type instance struct {
	id   string
	dir  string
	ev   adapters.Evidence
	slot adapters.Slot

	mu    sync.Mutex // guards live and procs
	live  *process
	procs []*process // every process opened, for Destroy to close their pipes
}

func (i *instance) ID() string { return i.id }

// WorkDir returns the instance's working directory: where a process runs
// unless its spec names another, and the cwd a Runner names in ACP.
func (i *instance) WorkDir() string { return i.dir }

// OpenProcess starts spec in the instance's directory (or spec.Dir),
// with an environment of PATH, HOME and TMPDIR only, plus spec.Env: the
// Runner's own environment is never inherited.
func (i *instance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "process: a process needs an argv")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := i.slot.Acquire(); err != nil {
		return nil, err
	}
	p, err := start(i, spec)
	if err != nil {
		i.slot.Release()
		return nil, err
	}
	i.mu.Lock()
	i.live = p
	i.procs = append(i.procs, p)
	i.mu.Unlock()
	return p, nil
}

// Destroy kills the live process, if any, waits for it and removes the
// instance's directory.
func (i *instance) Destroy(ctx context.Context) error {
	if !i.slot.Destroy() {
		return nil
	}
	i.mu.Lock()
	p, procs := i.live, i.procs
	i.procs = nil
	i.mu.Unlock()
	if p != nil {
		p.Kill()
		select {
		case <-p.reaped:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, p := range procs {
		p.closePipes()
	}
	return removeDir(i.dir)
}

func removeDir(dir string) error { return os.RemoveAll(dir) }

// env returns a process's whole environment: PATH, HOME and TMPDIR (the
// instance's directory) and extra; nothing of the Runner's own.
func env(dir string, extra []string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}, extra...)
}

type process struct {
	cmd            *exec.Cmd
	stdin          *os.File
	stdout, stderr *eofCloser
	ev             adapters.Evidence

	mu     sync.Mutex // guards exited (so Kill never signals a reaped group)
	exited bool
	reaped chan struct{} // closed once the process is reaped; then status and err are set
	status int
	err    error
}

func start(i *instance, spec adapters.ProcessSpec) (*process, error) {
	command := func() (*exec.Cmd, bool) {
		cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
		cmd.Dir = i.dir
		if spec.Dir != "" {
			cmd.Dir = spec.Dir
		}
		cmd.Env = env(i.dir, spec.Env)
		setGroup(cmd)
		return cmd, ownTree(cmd)
	}
	cmd, tree := command()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	if err != nil && tree && treeRefused(err) {
		// No PID namespace here: a process group only.
		cmd, _ = command()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		err = cmd.Start()
	}
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		return nil, checkfu.Refuse(wire.CodeProcessStartFailed, "process: %s did not start: %v", checkfu.Quote(spec.Argv[0]), cause)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: &eofCloser{f: outR}, stderr: &eofCloser{f: errR}, ev: i.ev, reaped: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exited = true
		p.mu.Unlock()
		p.status, p.err = status(cmd, err)
		i.mu.Lock()
		if i.live == p {
			i.live = nil
		}
		i.mu.Unlock()
		i.slot.Release()
		close(p.reaped)
	}()
	return p, nil
}

func (p *process) Stdin() io.WriteCloser       { return p.stdin }
func (p *process) Stdout() io.Reader           { return p.stdout }
func (p *process) Stderr() io.Reader           { return p.stderr }
func (p *process) Evidence() adapters.Evidence { return p.ev }

// Wait waits for the process to be reaped and returns its exit status.
func (p *process) Wait() (int, error) {
	<-p.reaped
	return p.status, p.err
}

// Kill sends SIGKILL to the process's whole process group, so a child it
// started dies too (and so its stdout ends). It does nothing once the
// process is reaped.
func (p *process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	killGroup(p.cmd)
	return nil
}

func (p *process) closePipes() {
	p.stdin.Close()
	p.stdout.f.Close()
	p.stderr.f.Close()
}

// An eofCloser reads a pipe and closes it at EOF, so a process whose
// output was read to the end holds no descriptor. It is read by one
// goroutine at a time, like any pipe.
type eofCloser struct {
	f   *os.File
	eof bool
}

func (e *eofCloser) Read(b []byte) (int, error) {
	if e.eof {
		return 0, io.EOF
	}
	n, err := e.f.Read(b)
	if err == io.EOF {
		e.eof = true
		e.f.Close()
	}
	return n, err
}

// status turns cmd.Wait's result into an exit status: the exit code, or
// 128+signal.
func status(cmd *exec.Cmd, err error) (int, error) {
	if cmd.ProcessState == nil {
		return -1, err
	}
	if s, ok := signaled(cmd.ProcessState); ok {
		return 128 + s, nil
	}
	return cmd.ProcessState.ExitCode(), nil
}
