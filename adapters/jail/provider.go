package jail

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// The provider's identity.
const (
	// Name is the provider name.
	Name = "checkfu:jail-provider"
	// Revision is the provider revision.
	Revision = "1"
	// MaterializationRevision names this package's materialization code:
	// a fresh jail per process, read back before the workload runs.
	MaterializationRevision = "jail-1"
	// Driver is the sandbox driver it declares.
	Driver = "jail"
)

// Paths inside a jail.
const (
	// WorkspacePath is the instance's writable workspace, the default
	// working directory and HOME.
	WorkspacePath = "/workspace"
	// BindRoot is where Config.Binds appear: every bind target is
	// beneath it, never over a system directory.
	BindRoot = "/run/checkfu"
)

// Bounds of a jail.
const (
	// TmpBytes bounds the private /tmp (and /dev/shm) of a jail.
	TmpBytes = 256 << 20
	// NoFile is the jail's RLIMIT_NOFILE.
	NoFile = 4096
	// Hostname is the jail's host name (its own UTS namespace).
	Hostname = "checkfu-jail"
	// DefaultPath is the PATH of a jail's processes.
	DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin"
)

// Default limits, for [Provider.Spec].
const (
	// DefaultMemoryBytes bounds memory, swap included.
	DefaultMemoryBytes = 512 << 20
	// DefaultPidsLimit bounds the number of processes.
	DefaultPidsLimit = 256
	// DefaultNanoCPUs bounds CPU time: one CPU.
	DefaultNanoCPUs = 1_000_000_000
	// DefaultWorkspaceBytes bounds an instance's workspace when
	// Config.WorkspaceBytes is 0.
	DefaultWorkspaceBytes = 1 << 30
)

// defaultSystemDirs is the table [DefaultSystemDirs] returns a copy of.
var defaultSystemDirs = [...]string{"/bin", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sbin", "/usr"}

// DefaultSystemDirs returns the host directories a jail sees read-only
// at the same paths when its Config names none (a symbolic link, as on a
// merged-/usr system, is recreated as a link); a directory the host
// lacks is left out. Each call returns a new slice.
func DefaultSystemDirs() []string { return slices.Clone(defaultSystemDirs[:]) }

// Platform is the one platform offered: the host's.
const Platform = runtime.GOOS + "/" + runtime.GOARCH

// A Bind is a host path mounted read-only in every jail of a provider:
// the broker's directory, the door program, a probe.
type Bind struct {
	// Source is the host path, a file or a directory. It is opened by
	// the provider, so the jail's identity need not be able to reach it.
	Source string
	// Target is the absolute path in the jail, beneath [BindRoot].
	Target string
}

// Config configures [New]. The zero Config is the host's system
// directories read-only, no bind, network mode none only.
type Config struct {
	// SystemDirs replaces [DefaultSystemDirs] when not nil.
	SystemDirs []string
	// Binds are mounted read-only in every jail.
	Binds []Bind
	// Guard, when set, offers the network mode allowlist: each
	// allowlist instance's relay forwards to the guard Guard starts for
	// the instance's allowed hosts.
	Guard GuardFunc
	// InitProgram, when set, is the absolute path of the
	// checkfu-jail-init program (adapters/jail/cmd/checkfu-jail-init,
	// built from the same revision of this module), which then starts
	// every jail instead of the Runner's own binary re-executed: a small
	// static program starts in about a millisecond, where a large Runner
	// pays its whole runtime start and package inits first. It is never
	// searched for. [New] opens it once and refuses it unless it is a
	// regular file owned by root or the Runner's user, writable by its
	// owner alone and not on FUSE (whose daemon answers the owner and
	// the bytes), and unless it answers a trial start with this
	// package's protocol; every jail then execs that opened file (the
	// descriptor stays open as long as the provider), so a file put at
	// the path later is never run. Empty: the Runner's own binary, which
	// must call [InitMain].
	InitProgram string
	// WorkspaceBytes bounds each instance's workspace, where the kernel
	// offers the resources axis (writable cgroups): the workspace is then
	// a tmpfs of this size, mounted on the host at the instance's
	// directory and shared by its jails, whose pages are charged to the
	// memory group of the jail that writes them (so an instance's memory
	// limit bounds it too). A write past it fails with ENOSPC. 0 means
	// [DefaultWorkspaceBytes]; a negative size is refused by [New].
	// Without the resources axis the workspace is a plain directory,
	// bounded by nothing, like the jail's memory.
	WorkspaceBytes int64
}

// A Provider implements [adapters.Provider] with daemonless Linux
// namespace jails. Make one with [New].
type Provider struct {
	cfg     Config
	sys     []string
	init    *os.File // Config.InitProgram, opened by New; nil for the Runner's own binary
	support Support
	desc    adapters.Description
}

var _ adapters.Provider = (*Provider)(nil)

// New returns a provider for cfg after trying the kernel: it refuses,
// with [CodeKernelUnsupported], a kernel without user namespaces (with
// mount, PID, network, IPC and UTS namespaces), Landlock or seccomp,
// naming each one missing ([Support.Lacks]); and, with
// checkfu.CodeConfigInvalid, a Bind whose target is not beneath
// [BindRoot] and an InitProgram it cannot trust or that does not answer
// its trial start with this package's protocol.
func New(cfg Config) (*Provider, error) {
	for _, b := range cfg.Binds {
		if !filepath.IsAbs(b.Source) || filepath.Clean(b.Target) != b.Target || !strings.HasPrefix(b.Target, BindRoot+"/") {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: bind %s -> %s: the source must be absolute and the target a clean path beneath %s",
				checkfu.Quote(b.Source), checkfu.Quote(b.Target), BindRoot)
		}
		if _, err := os.Stat(b.Source); err != nil {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: bind source %s: %v", checkfu.Quote(b.Source), err)
		}
	}
	if cfg.WorkspaceBytes < 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: a workspace of %d bytes", cfg.WorkspaceBytes)
	}
	if cfg.WorkspaceBytes == 0 {
		cfg.WorkspaceBytes = DefaultWorkspaceBytes
	}
	sys := cfg.SystemDirs
	if sys == nil {
		sys = defaultSystemDirs[:]
	}
	p := &Provider{cfg: cfg, sys: slices.Clone(sys)}
	if cfg.InitProgram != "" {
		f, err := openInitProgram(cfg.InitProgram)
		if err != nil {
			return nil, err
		}
		p.init = f
	}
	s, stageErr := p.probe()
	if stageErr != nil && p.init != nil {
		p.close()
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: init program %s: %v", checkfu.Quote(cfg.InitProgram), stageErr)
	}
	if lacks := s.Lacks(); len(lacks) > 0 {
		p.close()
		return nil, checkfu.Refuse(CodeKernelUnsupported, "jail: the kernel lacks %s; the jail never runs without them", strings.Join(lacks, ", "))
	}
	p.cfg.Binds = slices.Clone(cfg.Binds)
	p.support, p.desc = s, describe(s, cfg.Guard != nil)
	if cfg.Guard != nil {
		p.desc.Capability.PackageManagers = packageManagers(sys)
	}
	return p, nil
}

// close releases the init program's descriptor, for a provider New
// refuses.
func (p *Provider) close() {
	if p.init != nil {
		p.init.Close()
	}
}

// describe is the Description of a provider on a kernel with support s:
// runner_enforced on every axis the jail applies and reads back before
// the workload runs, unenforced on the rest. The image axis is
// unenforced: the jail runs the host's own system directories, not a
// pinned image. Resources are enforced only where the cgroup v1
// memory, pids and cpu hierarchies are writable.
//
// With a guard the allowlist's grade is advisory_filter, by
// advertisement: only a receipt for this exact revision could raise it.
// Without, there is no egress filter to grade.
func describe(s Support, allowlist bool) adapters.Description {
	modes, grade := []string{"none"}, checkfu.Unsupported
	if allowlist {
		modes, grade = []string{"allowlist", "none"}, checkfu.AdvisoryFilter
	}
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: Name, Revision: Revision},
		MaterializationRevision: MaterializationRevision,
		Placement:               admission.PlacementInProcess,
		Capability: admission.RunnerProviderCapability{
			Drivers:             []string{Driver},
			LaunchKinds:         []string{"process"},
			Platforms:           []string{Platform},
			NetworkModes:        modes,
			Enforcement:         s.enforcement(),
			EgressCertification: grade,
		},
	}
}

// ecosystemTools names, for each ecosystem a profile can declare, the
// commands any one of which lets a workload materialize its packages.
var ecosystemTools = []struct {
	ecosystem string
	tools     []string
}{
	{"apt", []string{"apt-get"}}, {"cargo", []string{"cargo"}}, {"gem", []string{"gem"}},
	{"go", []string{"go"}}, {"npm", []string{"npm"}}, {"pip", []string{"pip3", "pip"}},
}

// packageManagers is the ecosystems whose tool a jail's PATH finds in the
// system directories it sees: with the allowlist, the workload fetches
// their packages itself, through the guard. Sorted, as the capability
// requires.
func packageManagers(sys []string) []string {
	var out []string
	for _, e := range ecosystemTools {
		if hasTool(sys, e.tools) {
			out = append(out, e.ecosystem)
		}
	}
	return out
}

func hasTool(sys []string, tools []string) bool {
	for _, dir := range strings.Split(DefaultPath, ":") {
		visible := false
		for _, d := range sys {
			if dir == d || strings.HasPrefix(dir, d+"/") {
				visible = true
			}
		}
		if !visible {
			continue
		}
		for _, t := range tools {
			if fi, err := os.Stat(filepath.Join(dir, t)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return true
			}
		}
	}
	return false
}

// Describe returns the provider's declarations; the same value every
// call.
func (p *Provider) Describe() adapters.Description {
	d := p.desc
	c := &d.Capability
	c.Drivers, c.LaunchKinds = slices.Clone(c.Drivers), slices.Clone(c.LaunchKinds)
	c.Platforms, c.NetworkModes = slices.Clone(c.Platforms), slices.Clone(c.NetworkModes)
	c.PackageManagers = slices.Clone(c.PackageManagers)
	return d
}

// Support returns what the kernel offered when the provider was made.
func (p *Provider) Support() Support { return p.support }

// Spec returns the instance spec the provider accepts for id and profile
// digest: no image, the host platform, network mode none, and the
// default limits when the resources axis is enforced (none otherwise).
func (p *Provider) Spec(id, profileDigest string) adapters.InstanceSpec {
	s := adapters.InstanceSpec{ID: id, Platform: Platform, ProfileDigest: profileDigest, NetworkMode: "none"}
	if p.support.Cgroups {
		s.Limits = adapters.Limits{MemoryBytes: DefaultMemoryBytes, Pids: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs}
	}
	return s
}

// Create makes an instance for spec: a fresh workspace directory. It
// refuses an empty ID and a spec adapters.CheckSpec refuses with
// checkfu.CodeConfigInvalid; and with adapters.CodeSpecUnsupported a
// root image, another platform, a network mode not offered, and limits
// it cannot apply (with cgroups every limit must be asked, memory at
// least 8 MiB; without, none may be).
func (p *Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	return p.create(ctx, spec, "")
}

func (p *Provider) create(ctx context.Context, spec adapters.InstanceSpec, broker string) (adapters.Instance, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: an instance needs an ID")
	}
	if err := adapters.CheckSpec(spec); err != nil {
		return nil, err
	}
	l := spec.Limits
	switch {
	case spec.RootImage != "":
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: no root image can be applied (asked %s); the jail runs the host's system directories", checkfu.Quote(spec.RootImage))
	case spec.Platform != Platform:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: platform %s is not the host's %s", checkfu.Quote(spec.Platform), Platform)
	case !slices.Contains(p.desc.Capability.NetworkModes, spec.NetworkMode):
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: network mode %s is not offered; only %v", checkfu.Quote(spec.NetworkMode), p.desc.Capability.NetworkModes)
	case p.support.Cgroups && (l.MemoryBytes < 8<<20 || l.Pids < 1 || l.NanoCPUs < 1_000_000):
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: limits must all be set (memory %d bytes, at least 8 MiB; pids %d; nano CPUs %d, at least 1000000)", l.MemoryBytes, l.Pids, l.NanoCPUs)
	case !p.support.Cgroups && l != adapters.Limits{}:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: resource limits cannot be applied: no writable cgroup hierarchy")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.newInstance(ctx, spec, broker)
}

// BrokerMount is where CreateWithBroker's directory appears in a jail.
const BrokerMount = BindRoot + "/broker"

// CreateWithBroker is Create for a capability-enabled session: brokerDir,
// an absolute host directory only the plane serves (the gateway broker's
// socket is in it), is bind-mounted read-only at [BrokerMount] in every
// jail of the instance. The broker goes only with network mode none: a
// spec with any other mode is refused with adapters.CodeSpecUnsupported,
// so the broker's socket stays the only way out of a capability-enabled
// jail (no relay to a guard beside it), as on Docker.
func (p *Provider) CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error) {
	if !filepath.IsAbs(brokerDir) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: CreateWithBroker needs an absolute broker directory")
	}
	if spec.NetworkMode != "none" {
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "jail: a broker goes only with network mode none, not %s: capability-enabled code reaches only the broker", checkfu.Quote(spec.NetworkMode))
	}
	return p.create(ctx, spec, brokerDir)
}

// BrokerPath returns where CreateWithBroker's directory appears inside a
// jail: [BrokerMount].
func (p *Provider) BrokerPath() string { return BrokerMount }
