package admission

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants applies one mutant per refusal check (CHECKFU_MUTANTS=1).
// Deleting a signature verification is modelled by swapping in
// unverifiedPayload, a verifier that believes the payload: a plain
// deletion would be masked by the payload's absence.
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "schema validation in ParseProfile and check", File: "profile.go",
		Edits: []mutation.Edit{{Old: `if err := profileSchema.Validate(tree); err != nil {
		return nil, checkfu.Refuse`, New: `if err := profileSchema.Validate(tree); false && err != nil {
		return nil, checkfu.Refuse`}, {Old: `if err := profileSchema.Validate(tree); err != nil {
		return checkfu.Refuse`, New: `if err := profileSchema.Validate(tree); false && err != nil {
		return checkfu.Refuse`}},
		Kills: "TestParseProfileRefuses"},
	{Name: "strict decoding bounds", File: "decode.go",
		Edits: []mutation.Edit{{Old: `var strictOptions = strictjson.Options{MaxDepth: maxDocDepth, MaxBytes: maxDocBytes}`, New: `var strictOptions = strictjson.Options{}`}},
		Kills: "TestParseProfileRefuses|TestDepthBound"},
	{Name: "strict decoding of documents", File: "decode.go",
		Edits: []mutation.Edit{{Old: `if err := strictjson.Unmarshal(data, v, strictOptions); err != nil {`, New: `if err := json.Unmarshal(data, v); err != nil {`}},
		Kills: "TestParseCatalogRefuses|TestParseProfileRefuses"},
	{Name: "mcp alone is allowlist_reaches_nothing", File: "profile.go",
		Edits: []mutation.Edit{{Old: `if errors.Is(err, egress.CodeAllowlistEmpty) {`, New: `if false {`}},
		Kills: "TestParseProfileRefuses"},
	{Name: "empty expansion refused", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if len(byHost) == 0 {`, New: `if false {`}},
		Kills: "TestPackageManagersWithoutEcosystemReachNothing"},
	{Name: "declared ecosystems only", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(p.Ecosystems, ph.Ecosystem) {
				continue`, New: `if false {
				continue`}},
		Kills: "TestPublishExpandsDeclaredEcosystemsOnly"},
	{Name: "relay reason copied", File: "publish.go",
		Edits: []mutation.Edit{{Old: `g.RelaysToAnyOrigin = ph.RelaysToAnyOrigin`, New: `_ = ph.RelaysToAnyOrigin`}},
		Kills: "TestPublishMarksRelays|TestCheckLane|TestHandNamedRelayIsWarned"},
	{Name: "catalog version recorded", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if used {
			np.PresetCatalogVersion = catalog.Version()`, New: `if used {
			_ = catalog.Version()`}},
		Kills: "TestPublishExpandsDeclaredEcosystemsOnly|TestNewCatalogIsANewVersion"},
	{Name: "catalog version recorded for a relay mark", File: "publish.go",
		Edits: []mutation.Edit{{Old: `		g.RelaysToAnyOrigin = ph.RelaysToAnyOrigin
		np.PresetCatalogVersion = catalog.Version()`, New: `		g.RelaysToAnyOrigin = ph.RelaysToAnyOrigin`}},
		Kills: "TestHandNamedRelayIsWarned"},
	{Name: "version_conflict", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if prev != nil && prev.j.Name != profile.Name {`, New: `if false {`}},
		Kills: "TestPublishVersionConflict"},
	{Name: "idempotent republish", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if same, _ := equalJSON(j, prev.j); same {`, New: `if false {`}},
		Kills: "TestNewCatalogIsANewVersion|TestPropPublicationIdempotent"},
	{Name: "published digests recomputed", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if want.ProfileDigest != j.ProfileDigest || want.NetworkPolicyHash != j.NetworkPolicyHash || want.DerivedImageDigest != j.DerivedImageDigest {`, New: `if false {`}},
		Kills: "TestParsePublishedRoundTripAndTamper|TestParsePublishedResealed"},
	{Name: "diff: unrestricted widens nothing", File: "diff.go",
		Edits: []mutation.Edit{{Old: `	if d.OldType == egress.PolicyUnrestricted {
		nh = nil
	}`, New: ``}},
		Kills: "TestDiffWidensOnTypeAndRequirement"},
	{Name: "diff: requirement lowered widens", File: "diff.go",
		Edits: []mutation.Edit{{Old: `||
		d.NewRequirement.Min() < d.OldRequirement.Min()`, New: ``}},
		Kills: "TestDiffWidensOnTypeAndRequirement"},
	{Name: "egress requirement compared", File: "select.go",
		Edits: []mutation.Edit{{Old: `if !req.SatisfiedBy(got) {`, New: `if false {`}},
		Kills: "TestCheckEgress"},
	{Name: "grade only through EffectiveGrade", File: "select.go",
		Edits: []mutation.Edit{{Old: `return conformance.EffectiveGrade(c.Target, c.Advertised, c.Receipt)`, New: `return c.Advertised`}},
		Kills: "TestCheckEgress"},
	{Name: "grade derived from network_policy authority", File: "select.go",
		Edits: []mutation.Edit{{Old: `return conformance.EffectiveGrade(c.Target, c.Advertised, c.Receipt)`, New: `if c.NetworkPolicyAuthority == ProviderAttested {
		return checkfu.SecurityBoundary
	}
	return conformance.EffectiveGrade(c.Target, c.Advertised, c.Receipt)`}},
		Kills: "TestGradeIgnoresNetworkPolicyAuthority"},
	{Name: "capability sets sorted", File: "capability.go",
		Edits: []mutation.Edit{{Old: `if i > 0 && (*s.v)[i-1] >= v {`, New: `if i > 0 && false {`}},
		Kills: "TestCapabilityCheck"},
	{Name: "capability package managers", File: "capability.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(Ecosystems[:], m) {`, New: `if false {`}},
		Kills: "TestCapabilityCheck"},
	{Name: "runner_enforced capped by placement", File: "capability.go",
		Edits: []mutation.Edit{{Old: `if a == RunnerEnforced {`, New: `if false && a == RunnerEnforced {`}},
		Kills: "TestCheckPlacement|TestEnrollRefuses"},
	{Name: "intersect sets", File: "capability.go",
		Edits: []mutation.Edit{{Old: `if slices.Contains(*bs[i].v, x) {`, New: `if true || slices.Contains(*bs[i].v, x) {`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens|TestEnroll"},
	{Name: "intersect list_dir", File: "capability.go",
		Edits: []mutation.Edit{{Old: `out.ListDir = a.ListDir && b.ListDir`, New: `out.ListDir = a.ListDir`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens"},
	{Name: "intersect snapshots", File: "capability.go",
		Edits: []mutation.Edit{{Old: `out.Snapshots = a.Snapshots && b.Snapshots`, New: `out.Snapshots = a.Snapshots`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens"},
	{Name: "intersect snapshot_clone", File: "capability.go",
		Edits: []mutation.Edit{{Old: `out.SnapshotClone = a.SnapshotClone && b.SnapshotClone`, New: `out.SnapshotClone = a.SnapshotClone`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens"},
	{Name: "intersect grade", File: "capability.go",
		Edits: []mutation.Edit{{Old: `out.EgressCertification = min(a.EgressCertification, b.EgressCertification)`, New: `out.EgressCertification = a.EgressCertification`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens"},
	{Name: "intersect enforcement", File: "capability.go",
		Edits: []mutation.Edit{{Old: `out.Enforcement[i] = min(a.Enforcement[i], b.Enforcement[i])`, New: `out.Enforcement[i] = a.Enforcement[i]`}},
		Kills: "TestIntersectEveryAxis|TestPropIntersectionNeverWidens|TestEnroll"},
	{Name: "enrollment uses the intersection", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `effective: cloneCapability(Intersect(req.Declared, req.Ceiling))`, New: `effective: cloneCapability(req.Declared)`}},
		Kills: "TestEnroll|TestMemoryWritebackSkipIsVisible|TestPlacementRechecksLane"},
	{Name: "statement signature verified", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `signer, payload, err := req.Signers.VerifyPayload(req.Statement, MaterializationPayloadType)`, New: `signer, payload, err := unverifiedPayload(req.Statement)`}},
		Kills: "TestEnrollRefuses"},
	{Name: "statement canonical", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `if again, _ := canonicalJSON(st); string(again) != string(payload) {`, New: `if false {`}},
		Kills: "TestEnrollRefuses"},
	{Name: "statement signer is the provider", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `case signer.Name != req.Target.Provider:`, New: `case false:`}},
		Kills: "TestEnrollRefuses"},
	{Name: "statement target", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `case st.Provider != req.Target.Provider || st.ProviderRevision != req.Target.Revision:`, New: `case false:`}},
		Kills: "TestEnrollRefuses"},
	{Name: "statement placement", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `case st.Placement != req.Placement:`, New: `case false:`}},
		Kills: "TestEnrollRefuses"},
	{Name: "statement capability digest", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `case st.CapabilityDigest != want:`, New: `case false:`}},
		Kills: "TestEnrollRefuses"},
	{Name: "list_dir gates writeback", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(e.effective.MountKinds, "memory") || e.effective.ListDir {`, New: `if true {`}},
		Kills: "TestMemoryWritebackSkipIsVisible|ExampleEnroll"},
	{Name: "missing lane is adversarial", File: "lane.go",
		Edits: []mutation.Edit{{Old: `case "", "adversarial":`, New: `case "adversarial":`}, {Old: `case "trusted":`, New: `case "trusted", "":`}},
		Kills: "TestParseLane"},
	{Name: "adversarial relay named by hand", File: "lane.go",
		Edits: []mutation.Edit{{Old: `if !h.ByHand() {`, New: `if false {`}},
		Kills: "TestCheckLane"},
	{Name: "adversarial needs every axis", File: "lane.go",
		Edits: []mutation.Edit{{Old: `if ok, missing := eff.Enforcement.Realized(); !ok {`, New: `if ok, missing := eff.Enforcement.Realized(); false && !ok {`}},
		Kills: "TestCheckLane|TestPlacementRechecksLane"},
	{Name: "adversarial allowlist needs security_boundary", File: "lane.go",
		Edits: []mutation.Edit{{Old: `if g := c.Grade(); g != checkfu.SecurityBoundary {`, New: `if g := c.Grade(); false && g != checkfu.SecurityBoundary {`}},
		Kills: "TestCheckLane|TestAdmitRefuses"},
	{Name: "adversarial refuses unrestricted", File: "lane.go",
		Edits: []mutation.Edit{{Old: `return checkfu.Refuse(CodeLaneRequirementUnmet, "admission: adversarial lane needs no network or a certified allowlist, not %s", v.PolicyType())`, New: `return nil`}},
		Kills: "TestCheckLane"},
	{Name: "trusted session tainted", File: "lane.go",
		Edits: []mutation.Edit{{Old: `if lane == LaneTrusted && what != AcquireFirstParty {`, New: `if false {`}},
		Kills: "TestCheckAcquire"},
	{Name: "harness blocked", File: "harness.go",
		Edits: []mutation.Edit{{Old: `if e.Availability != Available {`, New: `if false {`}},
		Kills: "TestHarnessCatalog|TestAdmitRefuses"},
	{Name: "admit checks the harness", File: "record.go",
		Edits: []mutation.Edit{{Old: `h, err := harnesses.Launch(req.Harness)
	if err != nil {
		return nil, err
	}`, New: `h, _ := harnesses.Launch(req.Harness)`}},
		Kills: "TestAdmitRefuses"},
	{Name: "admit checks the lane", File: "record.go",
		Edits: []mutation.Edit{{Old: `err = CheckLane(lane, req.Profile, c, o.Enrollment.effective)`, New: `err = nil`}},
		Kills: "TestAdmitRefuses"},
	{Name: "admit checks egress", File: "record.go",
		Edits: []mutation.Edit{{Old: `err = CheckEgress(req.Profile, c)`, New: `err = nil`}},
		Kills: "TestAdmitRefuses"},
	{Name: "record signature verified", File: "record.go",
		Edits: []mutation.Edit{{Old: `signer, payload, err := keys.VerifyPayload(envelope, RecordPayloadType)`, New: `signer, payload, err := unverifiedPayload(envelope)`}},
		Kills: "TestRecordSignLoad"},
	{Name: "record canonical", File: "record.go",
		Edits: []mutation.Edit{{Old: `if again, err := canonicalJSON(f); err != nil || string(again) != string(payload) {`, New: `if false {`}},
		Kills: "TestRecordSignLoad"},
	{Name: "record signer is the deployment", File: "record.go",
		Edits: []mutation.Edit{{Old: `if signer.Name != deployment || f.Deployment != deployment {`, New: `if f.Deployment != deployment {`}},
		Kills: "TestRecordSignLoad"},
	{Name: "record names the deployment", File: "record.go",
		Edits: []mutation.Edit{{Old: `if signer.Name != deployment || f.Deployment != deployment {`, New: `if signer.Name != deployment {`}},
		Kills: "TestRecordSignLoad"},
	{Name: "placement: exact pair", File: "record.go",
		Edits: []mutation.Edit{{Old: `if !e.enrolled() || e.target != r.Target() {`, New: `if !e.enrolled() {`}},
		Kills: "TestPlacementRechecksLane"},
	{Name: "placement: exact profile version", File: "record.go",
		Edits: []mutation.Edit{{Old: `if !v.published() || v.ProfileDigest() != r.f.ProfileDigest || v.NetworkPolicyHash() != r.f.NetworkPolicyHash || v.Version() != r.f.ProfileVersion {`, New: `if !v.published() {`}},
		Kills: "TestPlacementRechecksLane"},
	{Name: "placement re-checks the lane", File: "record.go",
		Edits: []mutation.Edit{{Old: `return CheckLane(laneOf(r.f.Lane, r.f.Provenance), v, c, e.effective)`, New: `return nil`}},
		Kills: "TestPlacementRechecksLane"},
	{Name: "public view omits provenance", File: "record.go",
		Edits: []mutation.Edit{{Old: `Lane: f.Lane, Provider: f.Provider, ProviderRevision: f.ProviderRevision, Harness: f.Harness, AdmittedAt: f.AdmittedAt}`, New: `Lane: f.Lane, Provider: f.Provider + f.Provenance.Actor, ProviderRevision: f.ProviderRevision + f.Provenance.Role, Harness: f.Harness, AdmittedAt: f.AdmittedAt}`}},
		Kills: "TestPublicViewOmitsProvenance"},
	{Name: "ParsePublished re-derives the expansion", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if err := checkExpansion(p, j.NetworkPolicy, catalogs); err != nil {`, New: `if err := error(nil); err != nil {`}},
		Kills: "TestParsePublishedRefusesForgedPresetHost|TestParsePublishedRefusesDroppedRelay"},
	{Name: "re-derived expansion must equal the recorded one", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if same, _ := equalJSON(got, np); same {`, New: `if same, _ := equalJSON(got, np); same || true {`}},
		Kills: "TestParsePublishedRefusesForgedPresetHost|TestParsePublishedRefusesDroppedRelay"},
	{Name: "missing provenance is adversarial", File: "record.go",
		Edits: []mutation.Edit{{Old: `if lane == LaneTrusted && !p.declared() {`, New: `if false {`}},
		Kills: "TestTrustedLaneNeedsProvenance|TestPlaceTrustedNeedsProvenance"},
	{Name: "admission applies the provenance rule", File: "record.go",
		Edits: []mutation.Edit{{Old: `lane := laneOf(req.Lane, req.Provenance)`, New: `lane := req.Lane`}},
		Kills: "TestTrustedLaneNeedsProvenance"},
	{Name: "placement applies the provenance rule", File: "record.go",
		Edits: []mutation.Edit{{Old: `return CheckLane(laneOf(r.f.Lane, r.f.Provenance), v, c, e.effective)`, New: `return CheckLane(r.f.Lane, v, c, e.effective)`}},
		Kills: "TestPlaceTrustedNeedsProvenance"},
	{Name: "canonical encoding refuses invalid UTF-8", File: "decode.go",
		Edits: []mutation.Edit{{Old: `if replacedInvalidUTF8(raw) {`, New: `if false {`}},
		Kills: "TestDigestRefusesInvalidUTF8|TestSignRecordRefusesInvalidUTF8"},
	{Name: "invalid UTF-8 scan skips escaped characters", File: "decode.go",
		Edits: []mutation.Edit{{Old: `			return true
		}
		i++`, New: `			return true
		}`}},
		Kills: "TestDigestRefusesInvalidUTF8"},
	{Name: "relay reason quoted", File: "lane.go",
		Edits: []mutation.Edit{{Old: `checkfu.Quote(h.String()), checkfu.Quote(h.RelaysToAnyOrigin))`, New: `checkfu.Quote(h.String()), h.RelaysToAnyOrigin)`}},
		Kills: "TestRelayReasonQuotedBounded"},
	{Name: "record bound to its session", File: "record.go",
		Edits: []mutation.Edit{{Old: `if session == "" || f.Session != session {`, New: `if false {`}},
		Kills: "TestLoadRecordRefusesAnotherSession"},
	{Name: "zero Published refused by CheckEgress", File: "select.go",
		Edits: []mutation.Edit{{Old: `	if !v.published() {
		return notPublished()
	}
	switch v.PolicyType() {
	case egress.PolicyNone, egress.PolicyUnrestricted:
		return nil
	case egress.PolicyAllowlist:
	default:
		return checkfu.Refuse(CodeProfileInvalid, "admission: published version has network policy %s", checkfu.Quote(string(v.PolicyType())))
	}`, New: `	if v.PolicyType() != egress.PolicyAllowlist {
		return nil
	}`}},
		Kills: "TestZeroValuesFailClosed"},
	{Name: "zero Published refused by CheckLane", File: "lane.go",
		Edits: []mutation.Edit{{Old: `	if !v.published() {
		return notPublished()
	}
	if lane == LaneTrusted {`, New: `	if lane == LaneTrusted {`}},
		Kills: "TestZeroValuesFailClosed"},
	{Name: "canonical policy must read back", File: "profile.go",
		Edits: []mutation.Edit{{Old: `if _, err := egress.ParseNetworkPolicy(np); err != nil {`, New: `if _, err := egress.ParseNetworkPolicy(np); err != nil && false {`}},
		Kills: "TestLargeProfileReadsBack"},
	{Name: "admission checks the effective capability", File: "record.go",
		Edits: []mutation.Edit{{Old: `err := CheckCapability(req.Profile, o.Enrollment.effective)`, New: `err := error(nil)`}},
		Kills: "TestCeilingBindsAdmission"},
	{Name: "placement checks the effective capability", File: "record.go",
		Edits: []mutation.Edit{{Old: `if err := CheckCapability(v, e.effective); err != nil {`, New: `if err := CheckCapability(v, e.effective); false && err != nil {`}},
		Kills: "TestCeilingBindsAdmission"},
	{Name: "network mode within the effective capability", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `!slices.Contains(eff.NetworkModes, mode) {`, New: `false && !slices.Contains(eff.NetworkModes, mode) {`}},
		Kills: "TestCeilingBindsAdmission"},
	{Name: "ecosystems within the effective capability", File: "enroll.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(eff.PackageManagers, eco) {`, New: `if false {`}},
		Kills: "TestCeilingBindsAdmission"},
	{Name: "relays warned however granted", File: "publish.go",
		Edits: []mutation.Edit{{Old: `if g == nil || ph.RelaysToAnyOrigin == "" || g.RelaysToAnyOrigin != "" {`, New: `if true {`}},
		Kills: "TestHandNamedRelayIsWarned"},
}
