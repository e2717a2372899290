package docker

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
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
const Platform = "linux/" + runtime.GOARCH

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
	// GuardImage, when set, is GuardImage's answer, and the provider
	// offers the network mode allowlist too: each allowlist instance gets
	// an allowlist topology of its own ([Engine.NewAllowlist]) in a free
	// slot, whose guard enforces exactly the spec's AllowedHosts. Empty
	// offers network mode none only.
	GuardImage string
	// Resolver is the "ip:port" of the DNS server the guard resolves
	// with; empty means the engine's (the daemon's --dns).
	Resolver string

	// testServices, tests only, gives the guard of a topology whose outer
	// network is outer the resolver and the test blocks it may dial.
	testServices func(outer netip.Prefix) (resolver string, public []netip.Prefix)
}

// A Provider implements [adapters.Provider] on a Docker engine: the
// Runner's in-process adapter, with one fixed image, network mode none
// (and allowlist, given a guard image), and every process's isolation
// read back from the engine before it starts. Make one with
// [Engine.NewProvider].
type Provider struct {
	e       *Engine
	runtime string
	image   string // the image ID, sha256:...
	cfg     ProviderConfig
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
	if cfg.GuardImage != "" {
		if _, err := e.c.InspectImage(ctx, cfg.GuardImage); err != nil {
			return nil, err
		}
	}
	return &Provider{e: e, runtime: rt, image: img.ID, cfg: cfg, desc: describe(rt, img.ID, cfg.GuardImage != "")}, nil
}

// describe is the Description of the provider for runtime rt and image
// digest image, offering allowlist when allowlist is set. Enforcement is
// what the adapter sets itself and reads back from the engine before
// every start ([enforcementOf]).
//
// The allowlist's grade is advisory_filter, by advertisement: the guard
// is a filter beside the workload, and only a production receipt for
// this exact revision could raise it (conformance caps an advertisement
// below security_boundary); none exists. Without allowlist there is no
// egress filter to grade.
func describe(rt, image string, allowlist bool) adapters.Description {
	name, tier := ProviderName, TierStandard
	var assurances []string
	if rt == RuntimeRunsc {
		name, tier, assurances = GVisorProviderName, TierGVisor, []string{AssuranceGVisor}
	}
	modes, grade := []string{"none"}, checkfu.Unsupported
	if allowlist {
		modes, grade = []string{"allowlist", "none"}, checkfu.AdvisoryFilter
	}
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: name, Revision: ProviderRevision},
		MaterializationRevision: MaterializationRevision,
		Placement:               admission.PlacementInProcess,
		Capability: admission.RunnerProviderCapability{
			Drivers:             []string{"docker"},
			LaunchKinds:         []string{"process"},
			Tiers:               []string{tier},
			Platforms:           []string{Platform},
			NetworkModes:        modes,
			RuntimeAssurances:   assurances,
			Enforcement:         enforcement(rt),
			EgressCertification: grade,
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

// Create makes an instance for spec. It refuses an empty ID, and a spec
// adapters.CheckSpec refuses, with checkfu.CodeConfigInvalid; and with
// adapters.CodeSpecUnsupported another image, platform or network mode
// than the provider's, and limits it cannot apply: every limit must be
// asked (the adapter always applies all three, and evidence reports
// exactly what was applied), memory at least 6 MiB. All before any
// engine call.
//
// For network mode allowlist it builds the instance's own allowlist
// topology, whose guard's policy is exactly spec.AllowedHosts; the
// instance's Destroy removes it (its containers, both networks, the
// firewall rules).
func (p *Provider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	return p.create(ctx, spec, "")
}

// CreateWithBroker is Create for a capability-enabled session: brokerDir,
// an absolute host directory only the plane serves (the gateway broker's
// socket is in it), is bind-mounted read-only at [BrokerMount] in every
// process of the instance (InstanceConfig.BrokerDir). The network mode
// must be none, so the broker's socket is the workload's only way out:
// an allowlist spec is refused with adapters.CodeSpecUnsupported.
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
	if err := adapters.CheckSpec(spec); err != nil {
		return nil, err
	}
	l := spec.Limits
	switch {
	case spec.RootImage != p.image:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: root image %s is not the provider's %s", checkfu.Quote(spec.RootImage), p.image)
	case spec.Platform != Platform:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: platform %s is not %s", checkfu.Quote(spec.Platform), Platform)
	case !slices.Contains(p.desc.Capability.NetworkModes, spec.NetworkMode):
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: network mode %s is not offered; only %v", checkfu.Quote(spec.NetworkMode), p.desc.Capability.NetworkModes)
	case spec.NetworkMode != "none" && brokerDir != "":
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: the broker directory goes only with network mode none, not %s", checkfu.Quote(spec.NetworkMode))
	case l.MemoryBytes < 6<<20 || l.Pids < 1 || l.NanoCPUs < 1_000_000:
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "docker: limits must all be set (memory %d bytes, at least 6 MiB; pids %d; nano CPUs %d, at least 1000000)", l.MemoryBytes, l.Pids, l.NanoCPUs)
	}
	var a *Allowlist
	if spec.NetworkMode == "allowlist" {
		var err error
		if a, err = p.allowlist(ctx, spec.AllowedHosts); err != nil {
			return nil, err
		}
	}
	inst, err := p.e.CreateInstance(ctx, InstanceConfig{
		Image: p.image, Runtime: p.runtime, MemoryBytes: l.MemoryBytes, PidsLimit: l.Pids, NanoCPUs: l.NanoCPUs,
		BrokerDir: brokerDir, Allowlist: a,
	})
	if err != nil {
		if a != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
			err = errors.Join(err, a.Close(cctx))
			cancel()
		}
		return nil, err
	}
	spec.AllowedHosts = slices.Clone(spec.AllowedHosts)
	pi := &providerInstance{p: p, spec: spec, inst: inst, brokerDir: brokerDir, allowlist: a}
	if a != nil {
		pi.inner = a.innerName
	}
	return pi, nil
}

// allowlist builds an allowlist topology whose guard allows exactly
// hosts, in the first free slot from a random one.
func (p *Provider) allowlist(ctx context.Context, hosts []egress.HostPort) (*Allowlist, error) {
	policy, err := json.Marshal(struct {
		Type         string            `json:"type"`
		AllowedHosts []egress.HostPort `json:"allowed_hosts"`
	}{"allowlist", hosts})
	if err != nil {
		return nil, err
	}
	n := MaxSlot - MinSlot + 1
	first := rand.IntN(n)
	for i := range n {
		cfg := AllowlistConfig{Slot: MinSlot + (first+i)%n, Policy: policy, GuardImage: p.cfg.GuardImage, Resolver: p.cfg.Resolver}
		if p.cfg.testServices != nil {
			cfg.Resolver, cfg.TreatAsPublicForTesting = p.cfg.testServices(slotOuter(cfg.Slot))
		}
		a, err := p.e.NewAllowlist(ctx, cfg)
		if errors.Is(err, CodeEngineNameConflict) {
			continue
		}
		return a, err
	}
	return nil, checkfu.Refuse(CodeEngineNameConflict, "docker: every allowlist topology slot (%d to %d) is taken", MinSlot, MaxSlot)
}

// providerInstance is an [Instance] seen through the contract: the
// Runner's instance ID and the contract's evidence.
type providerInstance struct {
	p         *Provider
	spec      adapters.InstanceSpec
	inst      *Instance
	brokerDir string // CreateWithBroker's directory, or ""
	inner     string // the allowlist topology's internal network, or "" for network mode none

	mu        sync.Mutex
	allowlist *Allowlist // guarded by mu; the instance's own topology until Destroy removes it, or nil
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

// Destroy kills and reaps the live process, refuses later opens, and
// removes the instance's allowlist topology, if any. It is idempotent.
func (i *providerInstance) Destroy(ctx context.Context) error {
	err := i.inst.Destroy(ctx)
	i.mu.Lock()
	defer i.mu.Unlock()
	if err == nil && i.allowlist != nil {
		if err = i.allowlist.Close(ctx); err == nil {
			i.allowlist = nil
		}
	}
	return err
}

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
		Enforcement:             enforcementOf(ev, i.p.image, i.brokerDir, i.inner),
	}
	// An allowlist container's network mode is its topology's internal
	// network: that is the contract's allowlist.
	if i.inner != "" && ev.NetworkMode == i.inner {
		out.NetworkMode = "allowlist"
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
// reports shows the mechanism the adapter set. inner is the allowlist
// topology's internal network, or "" for network mode none.
func enforcementOf(ev Evidence, image, brokerDir, inner string) admission.Enforcement {
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
	// None: the container has a loopback interface only. Allowlist: it is
	// on the topology's internal network alone, behind the guard, and its
	// embedded DNS forwards nowhere.
	set(admission.AxisNetworkPolicy, inner == "" && ev.NetworkMode == "none" && slices.Equal(ev.Networks, []string{"none"}) ||
		inner != "" && ev.NetworkMode == inner && slices.Equal(ev.Networks, []string{inner}) && slices.Equal(ev.DNS, []string{BlackholeDNS}))
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
