package process

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/internal/procset"
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
const Platform = runtime.GOOS + "/" + runtime.GOARCH

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

// Create makes an instance: a fresh private working directory,
// TMPDIR/checkfu-process-PID-*, named by the pid of the process that
// made it. The first Create in a process sweeps the directories of
// owners that are no longer running (see [sweepDirs]). It refuses an empty ID with checkfu.CodeConfigInvalid, and a root image,
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
	sweepOnce.Do(sweepDirs)
	dir, err := os.MkdirTemp("", dirPrefix+deadowner.Self()+"-")
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

// dirPrefix begins the name of an instance's directory in the temporary
// directory, followed by the owner's name (its pid and PID namespace,
// see deadowner) and "-": a dead owner's are known by it.
const dirPrefix = "checkfu-process-"

// sweepOnce sweeps dead owners' directories at the first Create.
var sweepOnce sync.Once

type instance struct {
	id   string
	dir  string
	ev   adapters.Evidence
	proc procset.Set
}

func (i *instance) ID() string { return i.id }

// WorkDir returns the instance's working directory: where a process runs
// unless its spec names another, and the cwd a Runner names in ACP.
func (i *instance) WorkDir() string { return i.dir }

// OpenProcess starts spec in the instance's directory (or spec.Dir),
// with an environment of PATH, HOME and TMPDIR only, plus spec.Env: the
// Runner's own environment is never inherited.
func (i *instance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	return i.proc.Open(ctx, "process", spec, func() (*procset.Process, error) { return start(i, spec) })
}

// Destroy kills the live process, if any, waits for it and removes the
// instance's directory. When ctx ends before the killed process is
// reaped, the directory is removed all the same and ctx's error
// returned: Destroy runs once, so nothing would remove it later.
func (i *instance) Destroy(ctx context.Context) error {
	first, err := i.proc.Destroy(ctx)
	if !first {
		return err
	}
	return errors.Join(err, removeDir(i.dir))
}

func removeDir(dir string) error { return os.RemoveAll(dir) }

// env returns a process's whole environment: PATH, HOME and TMPDIR (the
// instance's directory) and extra; nothing of the Runner's own.
func env(dir string, extra []string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}, extra...)
}

func start(i *instance, spec adapters.ProcessSpec) (*procset.Process, error) {
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
	pipes, err := procset.NewPipes()
	if err != nil {
		return nil, err
	}
	pipes.Attach(cmd)
	err = cmd.Start()
	if err != nil && tree && treeRefused(err) {
		// No PID namespace here: a process group only.
		cmd, _ = command()
		pipes.Attach(cmd)
		err = cmd.Start()
	}
	if err != nil {
		pipes.Close()
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		return nil, checkfu.Refuse(wire.CodeProcessStartFailed, "process: %s did not start: %v", checkfu.Quote(spec.Argv[0]), cause)
	}
	pipes.CloseChild()
	return i.proc.Watch(cmd, pipes, i.ev, killGroup, nil), nil
}
