package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

// probePath is where the suite's network probe (adaptertest/probe) sits
// in the suite image.
const probePath = "/usr/local/bin/checkfu-probe"

var (
	suiteImageMu   sync.Mutex
	suiteImageDone string
)

// suiteImage builds (or finds, by content) busybox plus adaptertest's
// probe, the image the provider runs under the suite.
func suiteImage(t testing.TB, e *Engine) string {
	t.Helper()
	suiteImageMu.Lock()
	defer suiteImageMu.Unlock()
	if suiteImageDone != "" {
		return suiteImageDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(binDir(t), "checkfu-probe")
	if err := BuildStatic(ctx, "../..", "./adapters/adaptertest/probe", bin); err != nil {
		t.Fatal(err)
	}
	img, err := e.BusyboxImage(ctx, ImageOptions{Binaries: map[string]string{probePath: bin}})
	if err != nil {
		t.Fatal(err)
	}
	suiteImageDone = img
	return img
}

// testProvider returns a provider for runtime rt on the test engine,
// skipping (or, under CI, failing) without an engine.
func testProvider(t testing.TB, rt string) *Provider {
	t.Helper()
	e := testEngine(t)
	if rt == RuntimeRunsc {
		requireRunsc(t, e)
	}
	p, err := e.NewProvider(context.Background(), ProviderConfig{Image: suiteImage(t, e), Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requireRunsc skips without the gVisor runtime, and fails under CI.
func requireRunsc(t testing.TB, e *Engine) {
	t.Helper()
	rts, err := e.Runtimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rts, RuntimeRunsc) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but the engine has no %s runtime (runtimes %q): .ci/setup.d/20-docker.sh registers it when runsc installs", RuntimeRunsc, rts)
		}
		t.Skipf("the engine has no %s runtime (runtimes %q)", RuntimeRunsc, rts)
	}
}

// harness drives p under the suite. Each subtest gets its own Provider
// value on the same engine and image.
func harness(p *Provider) adaptertest.Harness {
	return adaptertest.Harness{
		New: func(testing.TB) adapters.Provider { q := *p; return &q },
		Spec: func(_ testing.TB, id, mode string) adapters.InstanceSpec {
			s := p.Spec(id, "sha256:"+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
			s.NetworkMode = mode
			if mode == "allowlist" {
				s.AllowedHosts = []egress.HostPort{{Host: "target.checkfu.test", Port: 8080}}
			}
			return s
		},
		Shell: []string{"/bin/sh", "-c"},
		Probe: []string{probePath},
	}
}

// TestAdaptertest runs the contract suite against the runc tier on the
// real engine, network mode none probed from inside a container.
func TestAdaptertest(t *testing.T) {
	adaptertest.TestProvider(t, harness(testProvider(t, RuntimeRunc)))
}

// TestAdaptertestAllowlist runs the contract suite against the runc tier
// offering allowlist: allowlist is its first mode, so every subtest's
// instance has a topology of its own, and the evidence of both modes
// is matched.
func TestAdaptertestAllowlist(t *testing.T) {
	e := testEngine(t)
	p, err := e.NewProvider(context.Background(), ProviderConfig{Image: suiteImage(t, e), GuardImage: images(t, e).guard})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.TestProvider(t, harness(p))
}

// TestAdaptertestGVisor runs the same suite against the gVisor tier.
func TestAdaptertestGVisor(t *testing.T) {
	adaptertest.TestProvider(t, harness(testProvider(t, RuntimeRunsc)))
}

// TestProviderDescription pins what each tier declares: network mode
// none only and the grade unsupported without a guard image, allowlist
// too and the grade advisory_filter with one; its own identity, tier and
// assurance, the read-back axes runner enforced and the others not.
func TestProviderDescription(t *testing.T) {
	for _, tc := range []struct {
		rt        string
		allowlist bool
	}{{RuntimeRunc, false}, {RuntimeRunsc, false}, {RuntimeRunc, true}, {RuntimeRunsc, true}} {
		rt := tc.rt
		d := describe(rt, "sha256:"+"ab"+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd", tc.allowlist)
		if err := adapters.Check(d); err != nil {
			t.Fatalf("%s: Check = %v", rt, err)
		}
		wantModes, wantGrade := []string{"none"}, checkfu.Unsupported
		if tc.allowlist {
			wantModes, wantGrade = []string{"allowlist", "none"}, checkfu.AdvisoryFilter
		}
		if m := d.Capability.NetworkModes; !slices.Equal(m, wantModes) || d.Placement != admission.PlacementInProcess {
			t.Errorf("%s: network modes %q placement %s, want %q", rt, m, d.Placement, wantModes)
		}
		if g := adapters.Grade(d, nil); g != wantGrade || d.Capability.EgressCertification != wantGrade {
			t.Errorf("%s: grade %v (advertised %v), want %v", rt, g, d.Capability.EgressCertification, wantGrade)
		}
		c := d.Capability
		wantName, wantTier, gvisor := ProviderName, TierStandard, false
		if rt == RuntimeRunsc {
			wantName, wantTier, gvisor = GVisorProviderName, TierGVisor, true
		}
		if d.Identity.Provider != wantName || !slices.Equal(c.Tiers, []string{wantTier}) || slices.Contains(c.RuntimeAssurances, AssuranceGVisor) != gvisor {
			t.Errorf("%s: identity %s tiers %q assurances %q", rt, d.Identity, c.Tiers, c.RuntimeAssurances)
		}
		for _, a := range admission.Axes() {
			want := admission.RunnerEnforced
			if a == admission.AxisSyscalls && !gvisor {
				want = admission.Unenforced // runc: the engine's seccomp default, neither set nor read back
			}
			if c.Enforcement[a] != want {
				t.Errorf("%s: axis %s is %v, want %v", rt, a, c.Enforcement[a], want)
			}
		}
	}
}

// TestProviderRefusesUnsupportedSpecs: what the provider cannot apply is
// refused before anything is created.
func TestProviderRefusesUnsupportedSpecs(t *testing.T) {
	p := testProvider(t, RuntimeRunc)
	good := p.Spec("cf-refusals", "")
	for name, mut := range map[string]func(*adapters.InstanceSpec){
		"another image":    func(s *adapters.InstanceSpec) { s.RootImage = "sha256:" + strings.Repeat("1", 64) },
		"a tag":            func(s *adapters.InstanceSpec) { s.RootImage = "checkfu-busybox:latest" },
		"another platform": func(s *adapters.InstanceSpec) { s.Platform = "linux/s390x" },
		"allowlist": func(s *adapters.InstanceSpec) {
			s.NetworkMode, s.AllowedHosts = "allowlist", []egress.HostPort{{Host: "example.com", Port: 443}}
		},
		"unrestricted":    func(s *adapters.InstanceSpec) { s.NetworkMode = "unrestricted" },
		"no memory limit": func(s *adapters.InstanceSpec) { s.Limits.MemoryBytes = 0 },
		"no pids limit":   func(s *adapters.InstanceSpec) { s.Limits.Pids = 0 },
		"no cpu limit":    func(s *adapters.InstanceSpec) { s.Limits.NanoCPUs = 0 },
		"negative memory": func(s *adapters.InstanceSpec) { s.Limits.MemoryBytes = -1 },
	} {
		s := good
		mut(&s)
		if inst, err := p.Create(context.Background(), s); !errors.Is(err, adapters.CodeSpecUnsupported) {
			if inst != nil {
				inst.Destroy(context.Background())
			}
			t.Errorf("Create with %s = %v, want %s", name, err, adapters.CodeSpecUnsupported)
		}
	}
}

// TestEnforcementFollowsReadBack: each runner-enforced axis is derived
// from the engine's read-back, so a container reported without the
// mechanism makes the evidence fail the enforcement clause.
func TestEnforcementFollowsReadBack(t *testing.T) {
	img := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	good := Evidence{Container: "c", ImageID: img, Runtime: RuntimeRunc, NetworkMode: "none", Networks: []string{"none"},
		MemoryBytes: DefaultMemoryBytes, MemorySwapBytes: DefaultMemoryBytes, PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs,
		ReadonlyRootfs: true, CapDrop: []string{"ALL"}, NoNewPrivileges: true, User: DefaultUser, TmpfsTmp: tmpfsTmp, IpcMode: "private"}
	want := enforcement(RuntimeRunc)
	if got := enforcementOf(good, img, "", ""); got != want {
		t.Fatalf("enforcement of a good read-back = %v, want %v", got, want)
	}
	for name, c := range map[string]struct {
		mut  func(*Evidence)
		axis admission.Axis
	}{
		"image":     {func(e *Evidence) { e.ImageID = "sha256:" + img[8:] + "0" }, admission.AxisImage},
		"readonly":  {func(e *Evidence) { e.ReadonlyRootfs = false }, admission.AxisFilesystem},
		"tmpfs":     {func(e *Evidence) { e.TmpfsTmp = "rw" }, admission.AxisFilesystem},
		"network":   {func(e *Evidence) { e.NetworkMode = "bridge" }, admission.AxisNetworkPolicy},
		"networks":  {func(e *Evidence) { e.Networks = []string{"bridge", "none"} }, admission.AxisNetworkPolicy},
		"capdrop":   {func(e *Evidence) { e.CapDrop = nil }, admission.AxisPrivileges},
		"capadd":    {func(e *Evidence) { e.CapAdd = []string{"NET_RAW"} }, admission.AxisPrivileges},
		"nnp":       {func(e *Evidence) { e.NoNewPrivileges = false }, admission.AxisPrivileges},
		"root":      {func(e *Evidence) { e.User = "0:0" }, admission.AxisPrivileges},
		"memory":    {func(e *Evidence) { e.MemoryBytes = 0 }, admission.AxisResources},
		"swap":      {func(e *Evidence) { e.MemorySwapBytes = -1 }, admission.AxisResources},
		"pids":      {func(e *Evidence) { e.PidsLimit = 0 }, admission.AxisResources},
		"cpu":       {func(e *Evidence) { e.NanoCPUs = 0 }, admission.AxisResources},
		"container": {func(e *Evidence) { e.Container = "" }, admission.AxisLifetime},
		"a bind":    {func(e *Evidence) { e.ExtraMounts = []string{"/etc:/host-etc"} }, admission.AxisMounts},
		"pid host":  {func(e *Evidence) { e.PidMode = "host" }, admission.AxisProcessIsolation},
		"ipc host":  {func(e *Evidence) { e.IpcMode = "host" }, admission.AxisProcessIsolation},
		"priv":      {func(e *Evidence) { e.Privileged = true }, admission.AxisProcessIsolation},
	} {
		ev := good
		ev.Networks = slices.Clone(good.Networks)
		ev.CapDrop = slices.Clone(good.CapDrop)
		c.mut(&ev)
		got := enforcementOf(ev, img, "", "")
		if got[c.axis] != admission.Unenforced {
			t.Errorf("%s changed: axis %s still %v", name, c.axis, got[c.axis])
		}
		if got == want {
			t.Errorf("%s changed: enforcement unchanged", name)
		}
	}
	// Allowlist: on the topology's internal network alone, the embedded
	// DNS forwarding to the black hole.
	const inner = "checkfu-7-inner"
	al := good
	al.NetworkMode, al.Networks, al.DNS = inner, []string{inner}, []string{BlackholeDNS}
	if got := enforcementOf(al, img, "", inner); got != want {
		t.Errorf("allowlist read-back: %v, want %v", got, want)
	}
	for name, mut := range map[string]func(*Evidence){
		"network none":          func(e *Evidence) { e.NetworkMode, e.Networks = "none", []string{"none"} },
		"another network":       func(e *Evidence) { e.NetworkMode, e.Networks = "checkfu-8-inner", []string{"checkfu-8-inner"} },
		"the outer network too": func(e *Evidence) { e.Networks = []string{"checkfu-7-outer", inner} },
		"the engine's DNS":      func(e *Evidence) { e.DNS = nil },
		"another DNS":           func(e *Evidence) { e.DNS = []string{"198.18.15.53"} },
	} {
		ev := al
		mut(&ev)
		if got := enforcementOf(ev, img, "", inner)[admission.AxisNetworkPolicy]; got != admission.Unenforced {
			t.Errorf("allowlist with %s: network policy axis %v, want unenforced", name, got)
		}
	}
	if got := enforcementOf(al, img, "", "")[admission.AxisNetworkPolicy]; got != admission.Unenforced {
		t.Errorf("none asked, allowlist read back: network policy axis %v, want unenforced", got)
	}
	gv := good
	gv.Runtime = RuntimeRunsc
	if got := enforcementOf(gv, img, "", ""); got != enforcement(RuntimeRunsc) {
		t.Errorf("gVisor read-back: %v, want %v", got, enforcement(RuntimeRunsc))
	}
	// The broker's directory, asked by CreateWithBroker, is the one
	// extra mount the plan holds; anything else, or its absence, is not
	// the plan.
	const dir = "/tmp/checkfu-broker-1"
	for _, c := range []struct {
		name   string
		asked  string
		mounts []string
		want   admission.Authority
	}{
		{"broker asked and mounted", dir, brokerMounts(dir), admission.RunnerEnforced},
		{"broker mounted, not asked", "", brokerMounts(dir), admission.Unenforced},
		{"broker asked, not mounted", dir, nil, admission.Unenforced},
		{"broker asked, another directory mounted", dir, brokerMounts("/etc"), admission.Unenforced},
		{"broker asked, and one more mount", dir, append(brokerMounts(dir), "bind:/extra"), admission.Unenforced},
	} {
		ev := good
		ev.ExtraMounts = c.mounts
		if got := enforcementOf(ev, img, c.asked, "")[admission.AxisMounts]; got != c.want {
			t.Errorf("%s: mounts axis %v, want %v", c.name, got, c.want)
		}
	}
}

// TestEvidenceMapping: the engine's read-back of a conforming container
// maps onto evidence that passes every clause of adapters.MatchEvidence,
// with the assurance isolation_checked; a read-back naming another image
// or network fails the clauses that say so.
func TestEvidenceMapping(t *testing.T) {
	img := "sha256:" + strings.Repeat("ab", 32)
	p := &Provider{runtime: RuntimeRunc, image: img, desc: describe(RuntimeRunc, img, false)}
	spec := p.Spec("cf-mapping", "sha256:"+strings.Repeat("cd", 32))
	inst := &providerInstance{p: p, spec: spec}
	good := Evidence{Label: checkfu.LabelIsolated, Container: "c", ImageID: img, Runtime: RuntimeRunc, NetworkMode: "none", Networks: []string{"none"},
		MemoryBytes: DefaultMemoryBytes, MemorySwapBytes: DefaultMemoryBytes, PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs,
		ReadonlyRootfs: true, CapDrop: []string{"ALL"}, NoNewPrivileges: true, User: DefaultUser, TmpfsTmp: tmpfsTmp, IpcMode: "private"}
	held := adapters.HeldFor(p.Describe(), spec)
	if m := adapters.MatchEvidence(held, inst.evidence(good)); !m.OK() || m.Assurance != adapters.AssuranceIsolationChecked {
		t.Fatalf("a conforming read-back: %v (assurance %s)", m.Err(), m.Assurance)
	}
	for name, c := range map[string]struct {
		mut  func(*Evidence)
		want []adapters.Clause
	}{
		"another image":   {func(e *Evidence) { e.ImageID = "sha256:" + strings.Repeat("ef", 32) }, []adapters.Clause{adapters.ClauseRootImage, adapters.ClauseEnforcement}},
		"a bridge too":    {func(e *Evidence) { e.Networks = []string{"bridge", "none"} }, []adapters.Clause{adapters.ClauseNetworkIsolated, adapters.ClauseEnforcement}},
		"another memory":  {func(e *Evidence) { e.MemoryBytes, e.MemorySwapBytes = 1<<30, 1<<30 }, []adapters.Clause{adapters.ClauseResourceLimits}},
		"no pids limit":   {func(e *Evidence) { e.PidsLimit = 0 }, []adapters.Clause{adapters.ClauseResourceLimits, adapters.ClauseEnforcement}},
		"network bridged": {func(e *Evidence) { e.NetworkMode, e.Networks = "bridge", []string{"bridge"} }, []adapters.Clause{adapters.ClauseNetworkMode, adapters.ClauseEnforcement}},
	} {
		ev := good
		c.mut(&ev)
		if m := adapters.MatchEvidence(held, inst.evidence(ev)); !slices.Equal(m.Failed, c.want) {
			t.Errorf("%s: failed %v, want %v", name, m.Failed, c.want)
		}
	}
}

// TestEvidenceMappingAllowlist: an allowlist container's read-back maps
// onto evidence with network mode allowlist that passes every clause; a
// container on network none, or on another network, fails.
func TestEvidenceMappingAllowlist(t *testing.T) {
	img := "sha256:" + strings.Repeat("ab", 32)
	p := &Provider{runtime: RuntimeRunc, image: img, desc: describe(RuntimeRunc, img, true)}
	spec := p.Spec("cf-mapping", "sha256:"+strings.Repeat("cd", 32))
	spec.NetworkMode, spec.AllowedHosts = "allowlist", []egress.HostPort{{Host: "example.com", Port: 443}}
	const inner = "checkfu-7-inner"
	inst := &providerInstance{p: p, spec: spec, inner: inner}
	good := Evidence{Label: checkfu.LabelIsolated, Container: "c", ImageID: img, Runtime: RuntimeRunc, NetworkMode: inner, Networks: []string{inner},
		MemoryBytes: DefaultMemoryBytes, MemorySwapBytes: DefaultMemoryBytes, PidsLimit: DefaultPidsLimit, NanoCPUs: DefaultNanoCPUs, DNS: []string{BlackholeDNS},
		ReadonlyRootfs: true, CapDrop: []string{"ALL"}, NoNewPrivileges: true, User: DefaultUser, TmpfsTmp: tmpfsTmp, IpcMode: "private"}
	held := adapters.HeldFor(p.Describe(), spec)
	ev := inst.evidence(good)
	if m := adapters.MatchEvidence(held, ev); !m.OK() || ev.NetworkMode != "allowlist" || !slices.Equal(ev.Networks, []string{inner}) {
		t.Fatalf("a conforming allowlist read-back: %v, network mode %q, networks %q", m.Err(), ev.NetworkMode, ev.Networks)
	}
	for name, c := range map[string]struct {
		mut  func(*Evidence)
		want []adapters.Clause
	}{
		"network none":    {func(e *Evidence) { e.NetworkMode, e.Networks = "none", []string{"none"} }, []adapters.Clause{adapters.ClauseNetworkMode, adapters.ClauseEnforcement}},
		"another network": {func(e *Evidence) { e.NetworkMode, e.Networks = "bridge", []string{"bridge"} }, []adapters.Clause{adapters.ClauseNetworkMode, adapters.ClauseEnforcement}},
	} {
		ev := good
		c.mut(&ev)
		if m := adapters.MatchEvidence(held, inst.evidence(ev)); !slices.Equal(m.Failed, c.want) {
			t.Errorf("%s: failed %v, want %v", name, m.Failed, c.want)
		}
	}
}

// TestAllowlistSpecRefusedBeforeTheEngine: an allowlist spec without its
// hosts, hosts with network none, and the broker directory with
// allowlist are refused before any engine call (the provider has no
// engine: a call would panic), and a provider without a guard image does
// not offer allowlist.
func TestAllowlistSpecRefusedBeforeTheEngine(t *testing.T) {
	img := "sha256:" + strings.Repeat("ab", 32)
	hosts := []egress.HostPort{{Host: "example.com", Port: 443}}
	with := &Provider{runtime: RuntimeRunc, image: img, cfg: ProviderConfig{GuardImage: "g"}, desc: describe(RuntimeRunc, img, true)}
	without := &Provider{runtime: RuntimeRunc, image: img, desc: describe(RuntimeRunc, img, false)}
	spec := func(mode string, hosts []egress.HostPort) adapters.InstanceSpec {
		s := with.Spec("cf-early", "")
		s.NetworkMode, s.AllowedHosts = mode, hosts
		return s
	}
	for _, c := range []struct {
		name   string
		p      *Provider
		spec   adapters.InstanceSpec
		broker string
		want   checkfu.Code
	}{
		{"allowlist without hosts", with, spec("allowlist", nil), "", checkfu.CodeConfigInvalid},
		{"hosts with none", with, spec("none", hosts), "", checkfu.CodeConfigInvalid},
		{"the broker with allowlist", with, spec("allowlist", hosts), "/tmp/checkfu-broker", adapters.CodeSpecUnsupported},
		{"allowlist without a guard image", without, spec("allowlist", hosts), "", adapters.CodeSpecUnsupported},
	} {
		var err error
		if c.broker != "" {
			_, err = c.p.CreateWithBroker(context.Background(), c.spec, c.broker)
		} else {
			_, err = c.p.Create(context.Background(), c.spec)
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// TestLanes: what the declarations mean to admission. The runc tier
// realizes eight axes of nine (syscalls unenforced), so the adversarial
// lane refuses it; the gVisor tier realizes all nine, so a none profile
// admits it on the adversarial lane. Both are admitted on the trusted
// lane.
func TestLanes(t *testing.T) {
	p, err := admission.ParseProfile([]byte(`{"name": "offline",
		"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 256}, "network_policy": {"type": "none"}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := admission.Publish(nil, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []string{RuntimeRunc, RuntimeRunsc} {
		d := describe(rt, "sha256:"+strings.Repeat("ab", 32), false)
		c := admission.Candidate{Target: d.Identity, Advertised: d.Capability.EgressCertification}
		err := admission.CheckLane(admission.LaneAdversarial, v, c, d.Capability)
		if rt == RuntimeRunc && !errors.Is(err, admission.CodeLaneRequirementUnmet) {
			t.Errorf("runc, adversarial lane: CheckLane = %v, want %s", err, admission.CodeLaneRequirementUnmet)
		}
		if rt == RuntimeRunsc && err != nil {
			t.Errorf("runsc, adversarial lane: CheckLane = %v", err)
		}
		if err := admission.CheckLane(admission.LaneTrusted, v, c, d.Capability); err != nil {
			t.Errorf("%s, trusted lane: CheckLane = %v", rt, err)
		}
	}
}

// TestNewProviderRefusesConfig: an empty image or an unknown runtime is
// refused before the engine is asked anything.
func TestNewProviderRefusesConfig(t *testing.T) {
	e := &Engine{} // no client: nothing may reach the engine
	for name, cfg := range map[string]ProviderConfig{
		"no image":        {},
		"unknown runtime": {Image: "checkfu-busybox:x", Runtime: "kata"},
	} {
		if _, err := e.NewProvider(context.Background(), cfg); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: NewProvider = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
}

// TestGVisorProviderNeedsRunsc: the gVisor tier is offered only when the
// engine registers runsc, and then it declares its tier and assurance.
func TestGVisorProviderNeedsRunsc(t *testing.T) {
	e := testEngine(t)
	rts, err := e.Runtimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.NewProvider(context.Background(), ProviderConfig{Image: suiteImage(t, e), Runtime: RuntimeRunsc})
	if !slices.Contains(rts, RuntimeRunsc) {
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Fatalf("runsc not registered (runtimes %q): NewProvider = %v, want %s", rts, err, checkfu.CodeConfigInvalid)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Describe().Capability; !slices.Equal(c.Tiers, []string{TierGVisor}) || !slices.Equal(c.RuntimeAssurances, []string{AssuranceGVisor}) {
		t.Errorf("gVisor provider: tiers %q assurances %q", c.Tiers, c.RuntimeAssurances)
	}
}
