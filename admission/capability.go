package admission

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
)

// An Authority says who stands behind one enforcement axis. Authorities
// form a total order, Unenforced < ProviderAttested < RunnerEnforced, and
// the zero Authority is Unenforced, so a missing statement claims nothing.
type Authority uint8

// The authority vocabulary of every enforcement axis (docs/admission.md).
const (
	// Unenforced: nobody enforces the axis.
	Unenforced Authority = iota
	// ProviderAttested: the provider says it enforces the axis. It is a
	// signed, ceilinged, attributable claim, not a fact Checkfu holds.
	ProviderAttested
	// RunnerEnforced: the trusted in-process Runner set the mechanism
	// itself. Only the in-process placement may claim it.
	RunnerEnforced
)

var authorityNames = [...]string{Unenforced: "unenforced", ProviderAttested: "provider_attested", RunnerEnforced: "runner_enforced"}

// String returns the text form of a.
func (a Authority) String() string {
	if int(a) < len(authorityNames) {
		return authorityNames[a]
	}
	return "authority(" + strconv.Itoa(int(a)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (a Authority) MarshalText() ([]byte, error) {
	if int(a) >= len(authorityNames) {
		return nil, checkfu.Refuse(CodeCapabilityInvalid, "admission: %s is not an authority", a)
	}
	return []byte(authorityNames[a]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: exactly one of the
// three spellings.
func (a *Authority) UnmarshalText(b []byte) error {
	for i, n := range authorityNames {
		if string(b) == n {
			*a = Authority(i)
			return nil
		}
	}
	return checkfu.Refuse(CodeCapabilityInvalid, "admission: authority %s is not runner_enforced, provider_attested or unenforced", checkfu.Quote(string(b)))
}

// An Axis is one of the nine axes of the enforcement statement.
type Axis uint8

// The nine enforcement axes, defined with their reasons in
// docs/admission.md.
const (
	// AxisImage: the process runs the pinned (derived) image digest.
	AxisImage Axis = iota
	// AxisFilesystem: the root filesystem is read-only outside the
	// planned writable paths.
	AxisFilesystem
	// AxisMounts: exactly the mount plan is mounted, with its modes.
	AxisMounts
	// AxisNetworkPolicy: the workload's own egress filter is applied.
	AxisNetworkPolicy
	// AxisProcessIsolation: the workload shares no process, IPC or PID
	// namespace (or VM) with the host or another session.
	AxisProcessIsolation
	// AxisPrivileges: no root on the host, no new privileges, capabilities
	// dropped.
	AxisPrivileges
	// AxisSyscalls: a system-call filter is applied.
	AxisSyscalls
	// AxisResources: the CPU, memory, disk and process limits hold.
	AxisResources
	// AxisLifetime: the session's timeout and kill reach every process.
	AxisLifetime

	numAxes = iota
)

var axisNames = [numAxes]string{"image", "filesystem", "mounts", "network_policy", "process_isolation", "privileges", "syscalls", "resources", "lifetime"}

// Axes returns the nine axes in order.
func Axes() []Axis {
	out := make([]Axis, numAxes)
	for i := range out {
		out[i] = Axis(i)
	}
	return out
}

// String returns the axis's snake_case name.
func (x Axis) String() string {
	if int(x) < numAxes {
		return axisNames[x]
	}
	return "axis(?)"
}

// An Enforcement is the nine-axis authority statement: for each axis, who
// enforces it. The zero Enforcement claims nothing on any axis.
type Enforcement [numAxes]Authority

// Realized reports whether every axis has an authority above Unenforced,
// and returns the axes that do not.
func (e Enforcement) Realized() (bool, []Axis) {
	var missing []Axis
	for i, a := range e {
		if a == Unenforced {
			missing = append(missing, Axis(i))
		}
	}
	return len(missing) == 0, missing
}

// MarshalJSON returns an object naming every axis.
func (e Enforcement) MarshalJSON() ([]byte, error) {
	m := make(map[string]Authority, numAxes)
	for i, a := range e {
		m[axisNames[i]] = a
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads an object whose members are axis names (each at
// most once; an absent axis is unenforced).
func (e *Enforcement) UnmarshalJSON(b []byte) error {
	var m map[string]Authority
	if err := json.Unmarshal(b, &m); err != nil {
		return checkfu.Refuse(CodeCapabilityInvalid, "admission: enforcement is not an object of axis authorities")
	}
	var out Enforcement
	for k, a := range m {
		i := slices.Index(axisNames[:], k)
		if i < 0 {
			return checkfu.Refuse(CodeCapabilityInvalid, "admission: enforcement axis %s is not one of %s", checkfu.Quote(k), strings.Join(axisNames[:], ", "))
		}
		out[i] = a
	}
	*e = out
	return nil
}

// A RunnerProviderCapability is what a provider revision can do, on every
// axis an enrollment ceiling must be able to contradict: the eleven from
// drivers through package_materialization, and seven more that would
// otherwise escape the ceiling (enforcement, egress_certification,
// image_modes, fixed_base_images, package_managers, snapshots, list_dir).
//
// Set-valued axes are sorted, distinct lists of names; an empty list
// means nothing on that axis. Boolean axes are "can". The zero value can
// do nothing.
type RunnerProviderCapability struct {
	// Drivers are the sandbox drivers the provider runs ("docker").
	Drivers []string `json:"drivers,omitempty"`
	// LaunchKinds are how a workload can be started ("process").
	LaunchKinds []string `json:"launch_kinds,omitempty"`
	// Tiers are the sandbox tiers offered.
	Tiers []string `json:"tiers,omitempty"`
	// Platforms are the OS/architecture pairs ("linux/amd64").
	Platforms []string `json:"platforms,omitempty"`
	// NetworkModes are the network policy members it can apply.
	NetworkModes []string `json:"network_modes,omitempty"`
	// RetentionModes are the retention modes it honours ("zero").
	RetentionModes []string `json:"retention_modes,omitempty"`
	// MountKinds are the mount kinds it can mount ("memory", "project").
	MountKinds []string `json:"mount_kinds,omitempty"`
	// RuntimeAssurances are the runtime hardenings it offers ("gvisor").
	RuntimeAssurances []string `json:"runtime_assurances,omitempty"`
	// SnapshotClone says whether it can clone a snapshot.
	SnapshotClone bool `json:"snapshot_clone,omitempty"`
	// SnapshotCustody are who may hold a snapshot's bytes.
	SnapshotCustody []string `json:"snapshot_custody,omitempty"`
	// PackageMaterialization are how packages reach the image.
	PackageMaterialization []string `json:"package_materialization,omitempty"`
	// Enforcement is the nine-axis authority statement.
	Enforcement Enforcement `json:"enforcement"`
	// EgressCertification is the advertised grade. Selection still
	// takes it only through conformance.EffectiveGrade.
	EgressCertification checkfu.Grade `json:"egress_certification"`
	// ImageModes are how the image is chosen ("derived", "fixed").
	ImageModes []string `json:"image_modes,omitempty"`
	// FixedBaseImages are the base image digests it can run.
	FixedBaseImages []string `json:"fixed_base_images,omitempty"`
	// PackageManagers are the ecosystems it can materialize, each one
	// of [Ecosystems].
	PackageManagers []string `json:"package_managers,omitempty"`
	// Snapshots says whether it can snapshot at all.
	Snapshots bool `json:"snapshots,omitempty"`
	// ListDir says whether it can list a directory, which memory
	// writeback needs.
	ListDir bool `json:"list_dir,omitempty"`
}

// sets returns pointers to every set-valued axis with its name, so that
// Check and Intersect cannot forget one (TestIntersectCoversEveryField
// counts the fields).
func (c *RunnerProviderCapability) sets() []struct {
	name string
	v    *[]string
} {
	return []struct {
		name string
		v    *[]string
	}{
		{"drivers", &c.Drivers}, {"launch_kinds", &c.LaunchKinds}, {"tiers", &c.Tiers},
		{"platforms", &c.Platforms}, {"network_modes", &c.NetworkModes}, {"retention_modes", &c.RetentionModes},
		{"mount_kinds", &c.MountKinds}, {"runtime_assurances", &c.RuntimeAssurances},
		{"snapshot_custody", &c.SnapshotCustody}, {"package_materialization", &c.PackageMaterialization},
		{"image_modes", &c.ImageModes}, {"fixed_base_images", &c.FixedBaseImages}, {"package_managers", &c.PackageManagers},
	}
}

// Check refuses, with [CodeCapabilityInvalid], a set axis that is not
// sorted and distinct or holds an empty or over-long name, an authority
// or grade outside its vocabulary, and a package manager that is not one
// of [Ecosystems].
func (c RunnerProviderCapability) Check() error {
	for _, s := range c.sets() {
		for i, v := range *s.v {
			if v == "" || len(v) > 255 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
				return checkfu.Refuse(CodeCapabilityInvalid, "admission: %s holds %s, not a name", s.name, checkfu.Quote(v))
			}
			if i > 0 && (*s.v)[i-1] >= v {
				return checkfu.Refuse(CodeCapabilityInvalid, "admission: %s is not sorted and distinct", s.name)
			}
		}
	}
	for _, m := range c.PackageManagers {
		if !slices.Contains(Ecosystems(), m) {
			return checkfu.Refuse(CodeCapabilityInvalid, "admission: package manager %s is not one of the six ecosystems", checkfu.Quote(m))
		}
	}
	for i, a := range c.Enforcement {
		if int(a) >= len(authorityNames) {
			return checkfu.Refuse(CodeCapabilityInvalid, "admission: enforcement axis %s has an authority outside the vocabulary", axisNames[i])
		}
	}
	if !c.EgressCertification.Valid() {
		return checkfu.Refuse(CodeCapabilityInvalid, "admission: egress_certification is not a grade")
	}
	return nil
}

// Intersect returns the capability both a and b allow, on every axis:
// set axes intersect, boolean axes are "and", the grade and each
// enforcement axis take the lesser. It never widens an axis of either.
func Intersect(a, b RunnerProviderCapability) RunnerProviderCapability {
	var out RunnerProviderCapability
	as, bs, os := a.sets(), b.sets(), out.sets()
	for i := range os {
		var v []string
		for _, x := range *as[i].v {
			if slices.Contains(*bs[i].v, x) {
				v = append(v, x)
			}
		}
		*os[i].v = v
	}
	out.SnapshotClone = a.SnapshotClone && b.SnapshotClone
	out.Snapshots = a.Snapshots && b.Snapshots
	out.ListDir = a.ListDir && b.ListDir
	out.EgressCertification = min(a.EgressCertification, b.EgressCertification)
	for i := range out.Enforcement {
		out.Enforcement[i] = min(a.Enforcement[i], b.Enforcement[i])
	}
	return out
}

// A Placement says where a provider runs relative to the trusted Runner.
type Placement string

// The two placements.
const (
	// PlacementInProcess: the provider is the in-process Runner adapter,
	// whose enforcement the Runner configures itself.
	PlacementInProcess Placement = "in_process"
	// PlacementRemote: the provider runs elsewhere (over a wire, or a
	// third party's adapter); it can attest, never runner_enforce.
	PlacementRemote Placement = "remote"
)

// CheckPlacement refuses, with [CodeAuthorityExceedsPlacement], a
// capability claiming runner_enforced on any axis when placement is not
// the in-process Runner, and an unknown placement with
// [CodeCapabilityInvalid].
func CheckPlacement(placement Placement, c RunnerProviderCapability) error {
	switch placement {
	case PlacementInProcess:
		return nil
	case PlacementRemote:
	default:
		return checkfu.Refuse(CodeCapabilityInvalid, "admission: placement %s is not in_process or remote", checkfu.Quote(string(placement)))
	}
	for i, a := range c.Enforcement {
		if a == RunnerEnforced {
			return checkfu.Refuse(CodeAuthorityExceedsPlacement, "admission: a %s provider claims runner_enforced on axis %s; only the in-process Runner may", placement, axisNames[i])
		}
	}
	return nil
}
