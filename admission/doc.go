// Package admission is the policy layer between a SandboxProfile and a
// running session: it decodes and publishes profiles, selects an exact
// provider revision, enrolls providers under an operator-issued ceiling,
// applies the workload trust lanes, and freezes the session's admission
// record. It is pure policy: no I/O, no provider call, no credential.
//
// Entry points: [ParseProfile] and [Publish] (with [ParsePublished],
// [DiffVersions] and [ParseCatalog]); [CheckEgress] and [Select];
// [Intersect], [CheckPlacement], [Enroll] and [CheckCapability] for the
// enrollment ceiling;
// [ParseLane], [CheckLane], [CheckAcquire] and [Place] for trust lanes;
// [Admit], [SignRecord], [LoadRecord] and [PublicView] for the frozen
// record; [DefaultHarnessCatalog] and [HarnessCatalog.Launch].
// docs/admission.md says what the design left open and what was decided.
//
// Invariants:
//
//   - Strict input. Every document is decoded strictly (valid UTF-8,
//     bounded size and depth, one value, no repeated or unknown member,
//     exact member names); a profile must also validate against the
//     shipped [ProfileSchema].
//   - Conveniences are abbreviations. After [Publish] only exact hosts
//     exist: allow_package_managers became the preset catalog's hosts for
//     the declared ecosystems, each recorded with the grant that put it
//     there, and allow_mcp_servers became no host at all. An allowlist
//     left with no host is refused (allowlist_reaches_nothing).
//   - Published versions are immutable. A version records its hosts and
//     grants, the catalog version, the network-policy hash and the derived
//     image digest; nothing edits it, and adopting a newer catalog is a
//     new version with new hashes. Republishing identical input returns
//     the same version.
//   - Digests are over a canonical encoding in which an omitted optional
//     member is absent, so adding an optional member changes no retained
//     profile's digest (pinned in testdata/digests.txt).
//   - Selection is exact and pure. A grade comes only from
//     conformance.EffectiveGrade for the exact (provider,
//     provider_revision) pair; it ignores enforcement.network_policy. An
//     allowlist without a requirement requires advisory_filter, so an
//     unsupported provider never runs an allowlist; none and unrestricted
//     ignore the grade.
//   - Nothing outside the ceiling. An [Enrollment]'s effective capability
//     is the intersection, on every axis, of what the provider declared
//     and the operator's ceiling; only the in-process Runner may claim
//     runner_enforced; the declaration is bound to a signed, attributable
//     materialization statement.
//   - Fail closed on trust. The zero [Lane] is adversarial; the
//     adversarial lane needs every enforcement axis realized and either no
//     network or a certified allowlist; [Place] re-checks this against the
//     provider's own effective capability, whatever the record says; a
//     trusted session never acquires third-party content or steering, and
//     [CheckLane] checks every host grant of a profile for it ([CheckGrant]).
//   - Frozen admission is authenticated. A [Record] is signed by the
//     deployment key under its own payload type and refused on load when
//     altered or from another deployment; [PublicView] carries no
//     declaration actor or role.
//   - Errors are [*checkfu.Refusal] values with the codes in codes.go;
//     hostile text is quoted and bounded.
package admission
