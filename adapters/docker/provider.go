package docker

import (
	"context"
	"runtime"
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
	"github.com/checkfu/checkfu/admission"
)

// The identities of the Docker providers. The gVisor tier is its own
// provider: its isolation differs, so grades, receipts and enrollments
// must never carry from one to the other.
const (
	// ProviderName is the provider name of the runc tier.
	ProviderName = "checkfu:docker-provider"
	// GVisorProviderName is the provider name of the gVisor tier
	// (runtime runsc).
	GVisorProviderName = "checkfu:docker-gvisor-provider"
	// ProviderRevision is the revision of both.
	ProviderRevision = "1"
	// MaterializationRevision names this package's materialization code:
	// a fresh container per process, isolation read back before start.
	MaterializationRevision = "docker-1"
)

// The tiers and runtime assurances the providers declare.
const (
	// TierStandard is the runc tier: Linux namespaces and cgroups.
	TierStandard = "standard"
	// TierGVisor is the gVisor tier: a user-space kernel between the
	// workload and the host.
	TierGVisor = "gvisor"
	// AssuranceGVisor is the runtime assurance of the gVisor tier.
	AssuranceGVisor = "gvisor"
)

// Platform is the one platform the providers offer: Linux on the host's
// architecture. The engine is reached over a local Unix socket and the
// images are built from the host's packages, so both are the host's.
var Platform = "linux/" + runtime.GOARCH

// ProviderConfig configures [Engine.NewProvider].
type ProviderConfig struct {
	// Image is the one image the provider runs, such as BusyboxImage's
	// answer. Required; it must be in the engine. The provider declares
	// it by digest (its image ID) as its one fixed base image.
	Image string
	// Runtime is RuntimeRunc (empty) for the standard tier or
	// RuntimeRunsc for the gVisor tier, which the engine must have
	// registered.
	Runtime string
}

// A Provider implements [adapters.Provider] on a Docker engine: the
// Runner's in-process adapter, with one fixed image, network mode none
// only, and every process's isolation read back from the engine before
// it starts. Make one with [Engine.NewProvider].
type Provider struct {
	e       *Engine
	runtime string
	image   string // the image ID, sha256:...
	desc    adapters.Description
}

var _ adapters.Provider = (*Provider)(nil)

// NewProvider returns a provider for cfg. It refuses, with
// checkfu.CodeConfigInvalid, an unknown runtime, RuntimeRunsc on an
// engine that has no runsc registered, and an image the engine reports
// for another platform than [Platform]; a missing image with
// CodeImageMissing.
func (e *Engine) NewProvider(ctx context.Context, cfg ProviderConfig) (*Provider, error) {
	if cfg.Image == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: a provider needs an image")
	}
	rt := cfg.Runtime
	if rt == "" {
		rt = RuntimeRunc
	}
	switch rt {
	case RuntimeRunc:
	case RuntimeRunsc:
		rts, err := e.Runtimes(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(rts, RuntimeRunsc) {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: the engine has no %s runtime registered, so it has no gVisor tier", RuntimeRunsc)
		}
	default:
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: runtime %s is not runc or runsc", checkfu.Quote(rt))
	}
	img, err := e.c.InspectImage(ctx, cfg.Image)
	if err != nil {
		return nil, err
	}
	if !adapters.IsDigest(img.ID) {
		return nil, checkfu.Refuse(CodeEngineRequestFailed, "docker: the engine names image %s by %s, not a sha256 digest", checkfu.Quote(cfg.Image), checkfu.Quote(img.ID))
	}
	if p := img.Os + "/" + img.Architecture; p != Platform {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: image %s is for %s, not %s", checkfu.Quote(cfg.Image), checkfu.Quote(p), Platform)
	}
	return &Provider{e: e, runtime: rt, image: img.ID, desc: describe(rt, img.ID)}, nil
}

// describe is the Description of the provider for runtime rt and image
// digest image. Enforcement is what the adapter sets itself and reads
// back from the engine before every start ([enforcementOf]).
func describe(rt, image string) adapters.Description {
	name, tier := ProviderName, TierStandard
	var assurances []string
	if rt == RuntimeRunsc {
		name, tier, assurances = GVisorProviderName, TierGVisor, []string{AssuranceGVisor}
	}
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: name, Revision: ProviderRevision},
		MaterializationRevision: MaterializationRevision,
		Placement:               admission.PlacementInProcess,
		Capability: admission.RunnerProviderCapability{
			Drivers:           []string{"docker"},
			LaunchKinds:       []string{"process"},
			Tiers:             []string{tier},
			Platforms:         []string{Platform},
			NetworkModes:      []string{"none"},
			RuntimeAssurances: assurances,
			Enforcement:       enforcement(rt),
			// No allowlist is offered through the contract, so there is
			// no egress filter to grade.
			EgressCertification: checkfu.Unsupported,
			ImageModes:          []string{"fixed"},
			FixedBaseImages:     []string{image},
		},
	}
}

// enforcement is the statement of the provider for runtime rt: runner
// enforced on every axis the adapter sets and reads back, unenforced on
// the rest. Syscalls are unenforced under runc: the filter there is the
// engine's default seccomp profile, which the adapter neither sets nor
// reads back. Under runsc every system call is served by gVisor's
// user-space kernel, and the runtime is read back.
func enforcement(rt string) admission.Enforcement {
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisImage, admission.AxisFilesystem, admission.AxisMounts, admission.AxisNetworkPolicy,
		admission.AxisProcessIsolation, admission.AxisPrivileges, admission.AxisResources, admission.AxisLifetime} {
		e[a] = admission.RunnerEnforced
	}
	if rt == RuntimeRunsc {
		e[admission.AxisSyscalls] = admission.RunnerEnforced
	}
	return e
}

// Describe returns the provider's declarations; the same value every
// call.
func (p *Provider) Describe() adapters.Description {
	d := p.desc
	c := &d.Capability
	c.Drivers, c.LaunchKinds, c.Tiers = slices.Clone(c.Drivers), slices.Clone(c.LaunchKinds), slices.Clone(c.Tiers)
	c.Platforms, c.NetworkModes = slices.Clone(c.Platforms), slices.Clone(c.NetworkModes)
	c.RuntimeAssurances, c.ImageModes, c.FixedBaseImages = slices.Clone(c.RuntimeAssurances), slices.Clone(c.ImageModes), slices.Clone(c.FixedBaseImages)
	return d
}

// Spec returns the instance spec the provider accepts for id and profile
// digest: its image, its platform, network mode none and the default
// limits.
func (p *Provider) Spec(id, profileDigest string) adapters.InstanceSpec {
	return adapters.InstanceSpec{
		ID: id, RootImage: p.image, Platform: Platform, ProfileDigest: profileDigest, NetworkMode: "none",
		Limits: adapters.Limits{MemoryBytes: DefaultMemoryBytes, Pids: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs},
	}
}

// Create makes an instance for spec. It refuses an empty ID with
// checkfu.CodeConfigInvalid, and with adapters.CodeSpecUnsupported
// another image, platform or network mode than the provider's, and
// limits it cannot apply: every limit must be asked (the adapter always
// applies all three, and evidence reports exactly what was applied),
// memory at least 6 MiB.
func (p *Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	return p.create(ctx, spec, "")
}

// CreateWithBroker is Create for a capability-enabled session: brokerDir,
// an absolute host directory only the plane serves (the gateway broker's
// socket is in it), is bind-mounted read-only at [BrokerMount] in every
// process of the instance (InstanceConfig.BrokerDir). The network mode is
// still none, so the broker's socket is the workload's only way out.
func (p *Provider) CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error) {
	if brokerDir == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: CreateWithBroker needs a broker directory")
	}
	return p.create(ctx, spec, brokerDir)
}

// BrokerPath returns where CreateWithBroker's directory appears inside
// the instance: [BrokerMount].
func (p *Provider) BrokerPath() string { return BrokerMount }

func (p *Provider) create(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: an instance needs an ID")
	}
	l := spec.Limits
	switch {
	case spec.RootImage != p.image:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: root image %s is not the provider's %s", checkfu.Quote(spec.RootImage), p.image)
	case spec.Platform != Platform:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: platform %s is not %s", checkfu.Quote(spec.Platform), Platform)
	case spec.NetworkMode != "none":
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: network mode %s is not offered; only none is", checkfu.Quote(spec.NetworkMode))
	case l.MemoryBytes < 6<<20 || l.Pids < 1 || l.NanoCPUs < 1_000_000:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: limits must all be set (memory %d bytes, at least 6 MiB; pids %d; nano CPUs %d, at least 1000000)", l.MemoryBytes, l.Pids, l.NanoCPUs)
	}
	inst, err := p.e.CreateInstance(ctx, InstanceConfig{
		Image: p.image, Runtime: p.runtime, MemoryBytes: l.MemoryBytes, PidsLimit: l.Pids, NanoCPUs: l.NanoCPUs,
		BrokerDir: brokerDir,
	})
	if err != nil {
		return nil, err
	}
	return &providerInstance{p: p, spec: spec, inst: inst, brokerDir: brokerDir}, nil
}

// providerInstance is an [Instance] seen through the contract: the
// Runner's instance ID and the contract's evidence.
type providerInstance struct {
	p         *Provider
	spec      adapters.InstanceSpec
	inst      *Instance
	brokerDir string // CreateWithBroker's directory, or ""
}

func (i *providerInstance) ID() string { return i.spec.ID }

// OpenProcess opens spec in a fresh container of the instance; the
// reservation and its refusals are the Instance's.
func (i *providerInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: a process needs an argv")
	}
	proc, err := i.inst.Open(ctx, ProcessSpec{Argv: spec.Argv, Env: spec.Env, Dir: spec.Dir})
	if err != nil {
		return nil, err
	}
	return &providerProcess{Process: proc, ev: i.evidence(proc.Evidence())}, nil
}

// Destroy kills and reaps the live process and refuses later opens.
func (i *providerInstance) Destroy(ctx context.Context) error { return i.inst.Destroy(ctx) }

// evidence maps what the engine reported about a process's container
// onto the contract's Evidence. Everything but the identity, the
// platform and the profile digest comes from the engine's read-back.
func (i *providerInstance) evidence(ev Evidence) adapters.Evidence {
	d := i.p.desc
	out := adapters.Evidence{
		Label:                   ev.Label,
		Instance:                i.spec.ID,
		Provider:                d.Identity.Provider,
		ProviderRevision:        d.Identity.Revision,
		MaterializationRevision: d.MaterializationRevision,
		RootImage:               ev.ImageID,
		Platform:                Platform,
		ProfileDigest:           i.spec.ProfileDigest,
		NetworkMode:             ev.NetworkMode,
		Limits:                  adapters.Limits{MemoryBytes: ev.MemoryBytes, Pids: ev.PidsLimit, NanoCPUs: ev.NanoCPUs},
		Enforcement:             enforcementOf(ev, i.p.image, i.brokerDir),
	}
	// Docker lists the "none" network of a NetworkMode none container; it
	// is the loopback interface only, which the contract does not list.
	for _, n := range ev.Networks {
		if n != "none" || ev.NetworkMode != "none" {
			out.Networks = append(out.Networks, n)
		}
	}
	return out
}

// enforcementOf derives the enforcement statement from the engine's
// read-back: an axis is runner enforced only when what the engine
// reports shows the mechanism the adapter set.
func enforcementOf(ev Evidence, image, brokerDir string) admission.Enforcement {
	var e admission.Enforcement
	set := func(a admission.Axis, ok bool) {
		if ok {
			e[a] = admission.RunnerEnforced
		}
	}
	set(admission.AxisImage, ev.ImageID == image)
	set(admission.AxisFilesystem, ev.ReadonlyRootfs && ev.TmpfsTmp == tmpfsTmp)
	// The mount plan is empty (no mount kind is offered): nothing but the
	// tmpfs /tmp is mounted, and, for CreateWithBroker, the broker's
	// directory read-only at BrokerMount, exactly as asked.
	set(admission.AxisMounts, slices.Equal(ev.ExtraMounts, brokerMounts(brokerDir)) && ev.TmpfsTmp == tmpfsTmp)
	set(admission.AxisNetworkPolicy, ev.NetworkMode == "none" && slices.Equal(ev.Networks, []string{"none"}))
	set(admission.AxisProcessIsolation, ev.PidMode == "" && ev.IpcMode == "private" && !ev.Privileged)
	set(admission.AxisPrivileges, slices.Equal(ev.CapDrop, []string{"ALL"}) && len(ev.CapAdd) == 0 && ev.NoNewPrivileges && ev.User != "" && !isRoot(ev.User))
	set(admission.AxisResources, ev.MemoryBytes > 0 && ev.MemorySwapBytes == ev.MemoryBytes && ev.PidsLimit > 0 && ev.NanoCPUs > 0)
	// Kill is SIGKILL to the container: every process of its PID
	// namespace dies, and the container is removed once reaped.
	set(admission.AxisLifetime, ev.Container != "")
	set(admission.AxisSyscalls, ev.Runtime == RuntimeRunsc)
	return e
}

// brokerMounts is the sorted ExtraMounts of a container with the broker
// directory dir bind-mounted (none for ""), as askedMounts computes it.
func brokerMounts(dir string) []string {
	if dir == "" {
		return nil
	}
	return askedMounts(engine.HostConfig{Binds: []string{dir + ":" + BrokerMount + ":ro"}})
}

// providerProcess is a [Process] with the contract's evidence.
type providerProcess struct {
	*Process
	ev adapters.Evidence
}

// Evidence returns the contract's evidence of the process.
func (p *providerProcess) Evidence() adapters.Evidence {
	ev := p.ev
	ev.Networks = slices.Clone(ev.Networks)
	return ev
}
