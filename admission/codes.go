package admission

import "github.com/checkfu/checkfu"

// Refusal codes. Every error this package returns for a refused
// profile, publication, selection, enrollment, lane, record or harness is
// a [*checkfu.Refusal] carrying one of these codes; branch on them with
// errors.Is. When the refusal wraps one from egress, signing or conformance, that
// code matches too (the cause is the Refusal's Err).
const (
	// CodeProfileInvalid: a SandboxProfile document is not strict JSON,
	// fails the shipped JSON Schema, or holds a field out of range.
	CodeProfileInvalid checkfu.Code = "profile_invalid"
	// CodeAllowlistReachesNothing: an allowlist names no host once its
	// conveniences are compiled away: allow_mcp_servers alone, or
	// allow_package_managers with no declared ecosystem, and no
	// hand-written host.
	CodeAllowlistReachesNothing checkfu.Code = "allowlist_reaches_nothing"
	// CodeCatalogInvalid: a preset catalog document is malformed or one
	// of its entries is refused by egress.NewPresetCatalog.
	CodeCatalogInvalid checkfu.Code = "catalog_invalid"
	// CodePublishedInvalid: a published version document is malformed,
	// or one of its hashes does not recompute from what it records.
	CodePublishedInvalid checkfu.Code = "published_invalid"
	// CodeVersionConflict: a publish names a previous version of another
	// profile.
	CodeVersionConflict checkfu.Code = "version_conflict"
	// CodeEgressCertificationUnsatisfied: the exact provider revision's
	// effective egress grade is below what the allowlist requires.
	CodeEgressCertificationUnsatisfied checkfu.Code = "egress_certification_unsatisfied"
	// CodeProviderUnavailable: no candidate provider revision satisfies
	// the profile; each candidate's own refusal is listed.
	CodeProviderUnavailable checkfu.Code = "provider_unavailable"
	// CodeCapabilityInvalid: a capability, ceiling or enforcement
	// statement names a value outside its vocabulary.
	CodeCapabilityInvalid checkfu.Code = "capability_invalid"
	// CodeAuthorityExceedsPlacement: a provider that is not the
	// in-process Runner claims runner_enforced on some axis.
	CodeAuthorityExceedsPlacement checkfu.Code = "authority_exceeds_placement"
	// CodeStatementInvalid: a materialization statement is unsigned,
	// malformed, not canonical, or signed by a key outside the
	// enrollment signer set.
	CodeStatementInvalid checkfu.Code = "statement_invalid"
	// CodeStatementMismatch: a verified materialization statement is for
	// another provider revision, placement or declared capability, or
	// was signed by a key enrolled for another provider.
	CodeStatementMismatch checkfu.Code = "statement_mismatch"
	// CodeCapabilityUnmet: the effective capability of a provider revision
	// (declared intersected with the ceiling) cannot run the profile: its
	// network policy is not one of network_modes, or a declared ecosystem
	// is not one of package_managers.
	CodeCapabilityUnmet checkfu.Code = "capability_unmet"
	// CodeLaneInvalid: a trust lane is not "trusted" or "adversarial".
	CodeLaneInvalid checkfu.Code = "lane_invalid"
	// CodeLaneRequirementUnmet: the adversarial lane needs every
	// enforcement axis realized and either no network or an allowlist
	// certified security_boundary, and the provider cannot give it.
	CodeLaneRequirementUnmet checkfu.Code = "lane_requirement_unmet"
	// CodeRelayNotNamed: an adversarial-lane profile reaches a host that
	// relays to any origin only through allow_package_managers; the
	// profile must name it in allowed_hosts by hand.
	CodeRelayNotNamed checkfu.Code = "relay_not_named"
	// CodeTrustedLaneTainted: a trusted session tried to acquire
	// third-party executable content or steering; that needs a new
	// adversarial session.
	CodeTrustedLaneTainted checkfu.Code = "trusted_lane_tainted"
	// CodePlacementMismatch: placement was asked to place a session on a
	// provider revision other than the one its admission record selected.
	CodePlacementMismatch checkfu.Code = "placement_mismatch"
	// CodeRecordUnauthentic: a frozen admission record does not verify
	// under the deployment's key (altered, unsigned or signed by another
	// key) or is not canonical.
	CodeRecordUnauthentic checkfu.Code = "record_unauthentic"
	// CodeDeploymentMismatch: a validly signed admission record names
	// another deployment.
	CodeDeploymentMismatch checkfu.Code = "deployment_mismatch"
	// CodeSessionMismatch: a validly signed admission record is of
	// another session than the one loading it (a replayed record).
	CodeSessionMismatch checkfu.Code = "session_mismatch"
	// CodeHarnessUnknown: the harness catalog has no entry of that name.
	CodeHarnessUnknown checkfu.Code = "harness_unknown"
	// CodeHarnessBlocked: the harness catalog entry's availability is
	// blocked; it cannot be launched.
	CodeHarnessBlocked checkfu.Code = "harness_blocked"
	// CodeMemoryWritebackSkipped is not a refusal but the reason code of
	// the visible skip [Enrollment.MemoryWriteback] returns: the provider
	// admitted memory mounts but declines list_dir, which memory
	// writeback needs.
	CodeMemoryWritebackSkipped checkfu.Code = "memory_writeback_skipped"
)
