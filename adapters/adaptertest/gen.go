package adaptertest

import (
	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// The generators below are for integrators' own property tests: a
// Runner, an enrollment flow or an adapter that takes capabilities and
// evidence.

var (
	genName   = rapid.StringMatching(`[a-z][a-z0-9_-]{0,11}`)
	genDigest = rapid.Custom(func(t *rapid.T) string {
		return "sha256:" + rapid.StringMatching(`[0-9a-f]{64}`).Draw(t, "hex")
	})
	networkModes = []string{"allowlist", "none", "unrestricted"}
)

// sortedSet draws a sorted, distinct subset of from.
func sortedSet(t *rapid.T, label string, from []string) []string {
	var out []string
	for _, v := range from {
		if rapid.Bool().Draw(t, label+" "+v) {
			out = append(out, v)
		}
	}
	return out
}

// Enforcement returns a generator of enforcement statements a provider
// at placement may make: any authority on any axis, except that only
// the in-process placement may say runner_enforced.
func Enforcement(placement admission.Placement) *rapid.Generator[admission.Enforcement] {
	top := admission.ProviderAttested
	if placement == admission.PlacementInProcess {
		top = admission.RunnerEnforced
	}
	return rapid.Custom(func(t *rapid.T) admission.Enforcement {
		var e admission.Enforcement
		for _, x := range admission.Axes() {
			e[x] = admission.Authority(rapid.IntRange(0, int(top)).Draw(t, x.String()))
		}
		return e
	})
}

// Capability returns a generator of capabilities that pass
// RunnerProviderCapability.Check and admission.CheckPlacement for
// placement.
func Capability(placement admission.Placement) *rapid.Generator[admission.RunnerProviderCapability] {
	return rapid.Custom(func(t *rapid.T) admission.RunnerProviderCapability {
		return admission.RunnerProviderCapability{
			Drivers:                sortedSet(t, "driver", []string{"docker", "firecracker", "process"}),
			LaunchKinds:            sortedSet(t, "launch", []string{"exec", "process"}),
			Tiers:                  sortedSet(t, "tier", []string{"standard", "strong"}),
			Platforms:              sortedSet(t, "platform", []string{"linux/amd64", "linux/arm64"}),
			NetworkModes:           sortedSet(t, "mode", networkModes),
			RetentionModes:         sortedSet(t, "retention", []string{"standard", "zero"}),
			MountKinds:             sortedSet(t, "mount", []string{"memory", "project"}),
			RuntimeAssurances:      sortedSet(t, "runtime", []string{"gvisor"}),
			SnapshotClone:          rapid.Bool().Draw(t, "snapshot_clone"),
			SnapshotCustody:        sortedSet(t, "custody", []string{"customer", "provider"}),
			PackageMaterialization: sortedSet(t, "materialization", []string{"baked", "runtime"}),
			Enforcement:            Enforcement(placement).Draw(t, "enforcement"),
			EgressCertification:    checkfu.Grade(rapid.IntRange(0, 2).Draw(t, "grade")),
			ImageModes:             sortedSet(t, "image_mode", []string{"derived", "fixed"}),
			PackageManagers:        sortedSet(t, "ecosystem", admission.Ecosystems()),
			Snapshots:              rapid.Bool().Draw(t, "snapshots"),
			ListDir:                rapid.Bool().Draw(t, "list_dir"),
		}
	})
}

// Description returns a generator of descriptions that pass
// adapters.Check.
func Description() *rapid.Generator[adapters.Description] {
	return rapid.Custom(func(t *rapid.T) adapters.Description {
		pl := rapid.SampledFrom([]admission.Placement{admission.PlacementInProcess, admission.PlacementRemote}).Draw(t, "placement")
		c := Capability(pl).Draw(t, "capability")
		return adapters.Description{
			Identity:                checkfu.ProviderRevision{Provider: "checkfu:" + genName.Draw(t, "provider"), Revision: genName.Draw(t, "revision")},
			MaterializationRevision: genName.Draw(t, "materialization"),
			Placement:               pl,
			Capability:              c,
			Members:                 adapters.Members{Snapshots: c.Snapshots, ListDir: c.ListDir, FileTransfer: rapid.Bool().Draw(t, "file_transfer")},
		}
	})
}

// A Pair is the Runner's state and a process's evidence.
type Pair struct {
	// Held is the reference side.
	Held adapters.Held
	// Evidence is what the provider reported.
	Evidence adapters.Evidence
}

// Matching returns a generator of pairs that pass every clause of
// adapters.MatchEvidence. Its pairs always name the root image by digest
// and set every limit, so that [Break] can fail one clause alone.
func Matching() *rapid.Generator[Pair] {
	return rapid.Custom(func(t *rapid.T) Pair {
		pl := rapid.SampledFrom([]admission.Placement{admission.PlacementInProcess, admission.PlacementRemote}).Draw(t, "placement")
		h := adapters.Held{
			Instance:                genName.Draw(t, "instance"),
			Target:                  checkfu.ProviderRevision{Provider: "checkfu:" + genName.Draw(t, "provider"), Revision: genName.Draw(t, "revision")},
			MaterializationRevision: genName.Draw(t, "materialization"),
			RootImage:               genDigest.Draw(t, "image"),
			Platform:                rapid.SampledFrom([]string{"linux/amd64", "linux/arm64"}).Draw(t, "platform"),
			ProfileDigest:           genDigest.Draw(t, "profile"),
			NetworkMode:             rapid.SampledFrom(networkModes).Draw(t, "mode"),
			Limits: adapters.Limits{
				MemoryBytes: rapid.Int64Range(1, 1<<40).Draw(t, "memory"),
				Pids:        rapid.Int64Range(1, 1<<20).Draw(t, "pids"),
				NanoCPUs:    rapid.Int64Range(1, 1<<40).Draw(t, "cpus"),
			},
			Placement:   pl,
			Enforcement: Enforcement(pl).Draw(t, "enforcement"),
		}
		ev := adapters.Evidence{
			Label:    checkfu.Label(rapid.IntRange(0, 2).Draw(t, "label")),
			Instance: h.Instance, Provider: h.Target.Provider, ProviderRevision: h.Target.Revision,
			MaterializationRevision: h.MaterializationRevision, RootImage: h.RootImage, Platform: h.Platform,
			ProfileDigest: h.ProfileDigest, NetworkMode: h.NetworkMode, Limits: h.Limits, Enforcement: h.Enforcement,
		}
		if h.NetworkMode != "none" && rapid.Bool().Draw(t, "attached") {
			ev.Networks = []string{genName.Draw(t, "network")}
		}
		return Pair{Held: h, Evidence: ev}
	})
}

// Break returns p, a pair from [Matching], changed so that exactly
// clause c fails. Binding clauses change the evidence's field; internal
// clauses change both sides alike (so no binding clause fails) into a
// self-contradicting evidence object; the enforcement clause changes one
// axis of the evidence to another authority.
func Break(t *rapid.T, p Pair, c adapters.Clause) Pair {
	h, ev := p.Held, p.Evidence
	other := func(s string) string { return s + "-" + genName.Draw(t, "other") }
	switch c {
	case adapters.ClauseInstance:
		ev.Instance = other(ev.Instance)
	case adapters.ClauseProvider:
		ev.Provider = other(ev.Provider)
	case adapters.ClauseProviderRevision:
		ev.ProviderRevision = other(ev.ProviderRevision)
	case adapters.ClauseMaterializationRevision:
		ev.MaterializationRevision = other(ev.MaterializationRevision)
	case adapters.ClauseRootImage:
		for ev.RootImage == h.RootImage {
			ev.RootImage = genDigest.Draw(t, "other image")
		}
	case adapters.ClausePlatform:
		ev.Platform = other(ev.Platform)
	case adapters.ClauseProfileDigest:
		for ev.ProfileDigest == h.ProfileDigest {
			ev.ProfileDigest = genDigest.Draw(t, "other profile")
		}
	case adapters.ClauseNetworkMode:
		ev.NetworkMode = other(ev.NetworkMode)
	case adapters.ClauseResourceLimits:
		ev.Limits.Pids += rapid.Int64Range(1, 1<<20).Draw(t, "more pids")
	case adapters.ClauseLabelValid:
		ev.Label = checkfu.Label(rapid.IntRange(3, 255).Draw(t, "bad label"))
	case adapters.ClauseEnforcementVocabulary:
		bad := admission.Authority(rapid.IntRange(3, 255).Draw(t, "bad authority"))
		h.Enforcement[admission.AxisSyscalls], ev.Enforcement[admission.AxisSyscalls] = bad, bad
	case adapters.ClauseLimitsNonnegative:
		neg := -rapid.Int64Range(1, 1<<40).Draw(t, "negative")
		f := rapid.IntRange(0, 2).Draw(t, "negative limit")
		*limitField(&h.Limits, f), *limitField(&ev.Limits, f) = neg, neg
	case adapters.ClauseImagePinned:
		tag := genName.Draw(t, "tag") + ":latest"
		h.RootImage, ev.RootImage = tag, tag
		h.Enforcement[admission.AxisImage], ev.Enforcement[admission.AxisImage] = admission.ProviderAttested, admission.ProviderAttested
	case adapters.ClauseNetworkIsolated:
		h.NetworkMode, ev.NetworkMode = "none", "none"
		ev.Networks = []string{genName.Draw(t, "attached network")}
	case adapters.ClauseResourcesLimited:
		f := rapid.IntRange(0, 2).Draw(t, "unset limit")
		*limitField(&h.Limits, f), *limitField(&ev.Limits, f) = 0, 0
		h.Enforcement[admission.AxisResources], ev.Enforcement[admission.AxisResources] = admission.ProviderAttested, admission.ProviderAttested
	case adapters.ClauseEnforcement:
		x := admission.Axis(rapid.IntRange(0, len(admission.Axes())-1).Draw(t, "axis"))
		ev.Enforcement[x] = (ev.Enforcement[x] + admission.Authority(rapid.IntRange(1, 2).Draw(t, "shift"))) % 3
	default:
		t.Fatalf("Break: no clause %v", c)
	}
	return Pair{Held: h, Evidence: ev}
}

// limitField returns the address of limit i (memory, pids, cpus).
func limitField(l *adapters.Limits, i int) *int64 {
	return [...]*int64{&l.MemoryBytes, &l.Pids, &l.NanoCPUs}[i]
}
