package adapters

import (
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// This file is pure: it imports no package that reaches files, processes
// or the network (TestEvidenceMatchingIsPure in the module root).

// Evidence is what a provider reports about one process's sandbox. The
// Runner never trusts it on its own: [MatchEvidence] binds it to state
// the Runner holds and checks it against itself.
type Evidence struct {
	// Label says how the evidence was produced. The zero Label is mock.
	Label checkfu.Label `json:"label"`
	// Instance is the instance the process runs in.
	Instance string `json:"instance"`
	// Provider and ProviderRevision are the exact pair that ran it.
	Provider         string `json:"provider"`
	ProviderRevision string `json:"provider_revision"`
	// MaterializationRevision names the code that materialized it.
	MaterializationRevision string `json:"materialization_revision"`
	// RootImage is the image digest the process runs; empty for none.
	RootImage string `json:"root_image"`
	// Platform is the OS/architecture pair it runs on.
	Platform string `json:"platform"`
	// ProfileDigest is the SandboxProfile digest it was materialized for.
	ProfileDigest string `json:"profile_digest"`
	// NetworkMode is the network policy member applied.
	NetworkMode string `json:"network_mode"`
	// Networks are the networks the sandbox is attached to, besides
	// loopback; sorted.
	Networks []string `json:"networks,omitempty"`
	// Limits are the resource limits applied.
	Limits Limits `json:"limits"`
	// Enforcement says, per axis, who enforces it for this process.
	Enforcement admission.Enforcement `json:"enforcement"`
}

// Held is the state the Runner holds about an instance before its
// process starts, the reference side of [MatchEvidence]. Build it from
// the provider's Description and the spec the Runner asked for with
// [HeldFor]; nothing in it comes from the process's evidence.
type Held struct {
	// Instance is the spec's ID.
	Instance string
	// Target is the exact provider revision the session was placed on.
	Target checkfu.ProviderRevision
	// MaterializationRevision is the one the enrollment statement names.
	MaterializationRevision string
	// RootImage, Platform, ProfileDigest, NetworkMode and Limits are what
	// the Runner asked for.
	RootImage     string
	Platform      string
	ProfileDigest string
	NetworkMode   string
	Limits        Limits
	// Placement is where the provider runs; it decides the assurance.
	Placement admission.Placement
	// Enforcement is the capability's enforcement: a constant of the
	// Runner for an in-process provider, the provider's own
	// advertisement for a remote one.
	Enforcement admission.Enforcement
}

// HeldFor returns the Runner's state for an instance of the provider
// described by d, created with spec.
func HeldFor(d Description, spec InstanceSpec) Held {
	return Held{
		Instance: spec.ID, Target: d.Identity, MaterializationRevision: d.MaterializationRevision,
		RootImage: spec.RootImage, Platform: spec.Platform, ProfileDigest: spec.ProfileDigest,
		NetworkMode: spec.NetworkMode, Limits: spec.Limits,
		Placement: d.Placement, Enforcement: d.Capability.Enforcement,
	}
}

// A Clause is one of the sixteen clauses of [MatchEvidence].
type Clause uint8

// The sixteen clauses, in the order MatchEvidence checks and reports
// them. The first nine bind the evidence to state the Runner holds;
// they survive a wire intact, because their reference side is the
// Runner's. The next six check the evidence object against itself;
// they were never cross-party. The last compares the evidence's
// enforcement with the capability's: a cross-check of isolation only
// when the Runner authored the capability (an in-process provider).
const (
	// ClauseInstance: the evidence names the instance the Runner made.
	ClauseInstance Clause = iota
	// ClauseProvider: it names the provider the session was placed on.
	ClauseProvider
	// ClauseProviderRevision: and that provider's exact revision.
	ClauseProviderRevision
	// ClauseMaterializationRevision: the materialization code is the one
	// the enrollment statement named.
	ClauseMaterializationRevision
	// ClauseRootImage: the process runs the image the Runner asked for.
	ClauseRootImage
	// ClausePlatform: on the platform the Runner asked for.
	ClausePlatform
	// ClauseProfileDigest: materialized for the admitted profile version.
	ClauseProfileDigest
	// ClauseNetworkMode: under the network mode the Runner asked for.
	ClauseNetworkMode
	// ClauseResourceLimits: with exactly the limits the Runner asked for.
	ClauseResourceLimits

	// ClauseLabelValid: the label is mock, isolated or production. An
	// out-of-vocabulary label is unreadable evidence, and a consumer
	// that tests "not mock" would take it for real.
	ClauseLabelValid
	// ClauseEnforcementVocabulary: every enforcement axis holds an
	// authority of the vocabulary. An out-of-range authority compares
	// above runner_enforced and would read as more than anyone can claim.
	ClauseEnforcementVocabulary
	// ClauseLimitsNonnegative: no limit is negative. Engines spell
	// "unlimited" as -1, so a negative limit is an unlimited resource
	// dressed as a number.
	ClauseLimitsNonnegative
	// ClauseImagePinned: when the image axis is enforced, the root image
	// is a sha256 digest. Enforcing a pinned image that is named by a
	// mutable tag, or not named, enforces nothing.
	ClauseImagePinned
	// ClauseNetworkIsolated: a network mode of none lists no attached
	// network. Evidence that says none and names a network contradicts
	// itself, so one half of it is false.
	ClauseNetworkIsolated
	// ClauseResourcesLimited: when the resources axis is enforced, every
	// limit is set. A resources claim with no limit enforces nothing.
	ClauseResourcesLimited

	// ClauseEnforcement: the evidence's enforcement equals the
	// capability's, axis by axis.
	ClauseEnforcement

	numClauses = iota
)

var clauseNames = [numClauses]string{
	"instance", "provider", "provider_revision", "materialization_revision", "root_image",
	"platform", "profile_digest", "network_mode", "resource_limits",
	"label_valid", "enforcement_vocabulary", "limits_nonnegative", "image_pinned",
	"network_isolated", "resources_limited",
	"enforcement",
}

// Clauses returns the sixteen clauses in order.
func Clauses() []Clause {
	out := make([]Clause, numClauses)
	for i := range out {
		out[i] = Clause(i)
	}
	return out
}

// String returns the clause's snake_case name.
func (c Clause) String() string {
	if int(c) < numClauses {
		return clauseNames[c]
	}
	return "clause(" + strconv.Itoa(int(c)) + ")"
}

// An Assurance says what a passing [MatchEvidence] means.
type Assurance string

// The two assurances.
const (
	// AssuranceIsolationChecked: the provider is in-process, so the
	// capability's enforcement is a constant the Runner compiled in and
	// the enforcement clause compared the provider's statement with a
	// Runner-owned fact.
	AssuranceIsolationChecked Assurance = "isolation_checked"
	// AssuranceIdentityOnly: the provider sits across a wire (or its
	// placement is unknown), so both sides of the enforcement clause were
	// authored by the same party. The match is an identity and
	// self-consistency check, never an isolation check.
	AssuranceIdentityOnly Assurance = "identity_only"
)

// A Match is the result of [MatchEvidence].
type Match struct {
	// Failed lists every failed clause, in clause order; empty when the
	// evidence matches.
	Failed []Clause
	// Assurance is what the comparison can mean, recorded whether or not
	// it passed.
	Assurance Assurance
}

// OK reports whether no clause failed.
func (m Match) OK() bool { return len(m.Failed) == 0 }

// Err returns nil when m is OK, and otherwise a refusal with
// [CodeEvidenceMismatch] naming every failed clause and the assurance.
func (m Match) Err() error {
	if m.OK() {
		return nil
	}
	names := make([]string, len(m.Failed))
	for i, c := range m.Failed {
		names[i] = c.String()
	}
	return checkfu.Refuse(CodeEvidenceMismatch, "adapters: evidence fails %s (assurance %s)", strings.Join(names, ", "), m.Assurance)
}

// MatchEvidence checks a process's evidence ev against the Runner's
// state held, clause by clause, and returns every failed clause and the
// assurance of the comparison. It is pure: no I/O, no clock, no
// randomness, the same result for the same arguments.
//
// The assurance is isolation_checked only for an in-process provider;
// for a remote one (or any other placement) it is identity_only, because
// there the capability's enforcement and the evidence's are both the
// provider's own statements.
func MatchEvidence(held Held, ev Evidence) Match {
	m := Match{Assurance: AssuranceIdentityOnly}
	if held.Placement == admission.PlacementInProcess {
		m.Assurance = AssuranceIsolationChecked
	}
	fail := func(c Clause, bad bool) {
		if bad {
			m.Failed = append(m.Failed, c)
		}
	}
	fail(ClauseInstance, ev.Instance != held.Instance)
	fail(ClauseProvider, ev.Provider != held.Target.Provider)
	fail(ClauseProviderRevision, ev.ProviderRevision != held.Target.Revision)
	fail(ClauseMaterializationRevision, ev.MaterializationRevision != held.MaterializationRevision)
	fail(ClauseRootImage, ev.RootImage != held.RootImage)
	fail(ClausePlatform, ev.Platform != held.Platform)
	fail(ClauseProfileDigest, ev.ProfileDigest != held.ProfileDigest)
	fail(ClauseNetworkMode, ev.NetworkMode != held.NetworkMode)
	fail(ClauseResourceLimits, ev.Limits != held.Limits)

	fail(ClauseLabelValid, !ev.Label.Valid())
	fail(ClauseEnforcementVocabulary, !vocabulary(ev.Enforcement))
	fail(ClauseLimitsNonnegative, ev.Limits.MemoryBytes < 0 || ev.Limits.Pids < 0 || ev.Limits.NanoCPUs < 0)
	fail(ClauseImagePinned, ev.Enforcement[admission.AxisImage] != admission.Unenforced && !IsDigest(ev.RootImage))
	fail(ClauseNetworkIsolated, ev.NetworkMode == "none" && len(ev.Networks) > 0)
	fail(ClauseResourcesLimited, ev.Enforcement[admission.AxisResources] != admission.Unenforced &&
		(ev.Limits.MemoryBytes == 0 || ev.Limits.Pids == 0 || ev.Limits.NanoCPUs == 0))

	fail(ClauseEnforcement, ev.Enforcement != held.Enforcement)
	return m
}

// vocabulary reports whether every axis of e holds one of the three
// authorities.
func vocabulary(e admission.Enforcement) bool {
	for _, a := range e {
		if a > admission.RunnerEnforced {
			return false
		}
	}
	return true
}

// IsDigest reports whether s is "sha256:" followed by 64 lowercase hex
// digits.
func IsDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
