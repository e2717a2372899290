package adapters_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// clauseMutant deletes one clause of MatchEvidence.
func clauseMutant(clause, cond, kills string) mutation.Mutant {
	return mutation.Mutant{
		Name: "delete clause " + clause, File: "evidence.go",
		Edits: []mutation.Edit{{Old: "fail(" + clause + ", " + cond, New: "fail(" + clause + ", false && " + cond}},
		Kills: kills,
	}
}

var mutants = []mutation.Mutant{
	{Name: "allowlist spec without hosts", File: "provider.go",
		Edits: []mutation.Edit{{Old: `if spec.NetworkMode == "allowlist" && len(spec.AllowedHosts) == 0 {`, New: `if false {`}},
		Kills: "TestCheckSpec"},
	{Name: "allowed hosts with another network mode", File: "provider.go",
		Edits: []mutation.Edit{{Old: `if spec.NetworkMode != "allowlist" && len(spec.AllowedHosts) > 0 {`, New: `if false {`}},
		Kills: "TestCheckSpec"},
	{Name: "allowed host not canonical", File: "provider.go",
		Edits: []mutation.Edit{{Old: `err != nil || c != h {`, New: `false && (err != nil || c != h) {`}},
		Kills: "TestCheckSpec"},
	{Name: "allowed hosts not sorted and distinct", File: "provider.go",
		Edits: []mutation.Edit{{Old: `compareHostPort(spec.AllowedHosts[i-1], h) >= 0 {`, New: `compareHostPort(spec.AllowedHosts[i-1], h) > 0 {`}},
		Kills: "TestCheckSpec"},
	clauseMutant("ClauseInstance", "ev.Instance != held.Instance)", "TestClauseInstance"),
	clauseMutant("ClauseProvider", "ev.Provider != held.Target.Provider)", "TestClauseProvider"),
	clauseMutant("ClauseProviderRevision", "ev.ProviderRevision != held.Target.Revision)", "TestClauseProviderRevision"),
	clauseMutant("ClauseMaterializationRevision", "ev.MaterializationRevision != held.MaterializationRevision)", "TestClauseMaterializationRevision"),
	clauseMutant("ClauseRootImage", "ev.RootImage != held.RootImage)", "TestClauseRootImage"),
	clauseMutant("ClausePlatform", "ev.Platform != held.Platform)", "TestClausePlatform"),
	clauseMutant("ClauseProfileDigest", "ev.ProfileDigest != held.ProfileDigest)", "TestClauseProfileDigest"),
	clauseMutant("ClauseNetworkMode", "ev.NetworkMode != held.NetworkMode)", "TestClauseNetworkMode"),
	clauseMutant("ClauseResourceLimits", "ev.Limits != held.Limits)", "TestClauseResourceLimits"),
	clauseMutant("ClauseLabelValid", "!ev.Label.Valid())", "TestClauseLabelValid"),
	clauseMutant("ClauseEnforcementVocabulary", "!vocabulary(ev.Enforcement))", "TestClauseEnforcementVocabulary"),
	clauseMutant("ClauseLimitsNonnegative", "ev.Limits.MemoryBytes < 0", "TestClauseLimitsNonnegative"),
	clauseMutant("ClauseImagePinned", "ev.Enforcement[admission.AxisImage]", "TestClauseImagePinned"),
	clauseMutant("ClauseNetworkIsolated", `ev.NetworkMode == "none"`, "TestClauseNetworkIsolated"),
	clauseMutant("ClauseResourcesLimited", "ev.Enforcement[admission.AxisResources]", "TestClauseResourcesLimited"),
	clauseMutant("ClauseEnforcement", "ev.Enforcement != held.Enforcement)", "TestClauseEnforcement"),
	{Name: "a negative pids limit passes", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "ev.Limits.Pids < 0 ||", New: ""}}, Kills: "TestClauseLimitsNonnegative"},
	{Name: "a zero memory limit passes under enforced resources", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "(ev.Limits.MemoryBytes == 0 ||", New: "(false ||"}}, Kills: "TestClauseResourcesLimited"},
	{Name: "every placement is isolation_checked", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "if held.Placement == admission.PlacementInProcess {", New: "if true {"}}, Kills: "TestAssurance"},
	{Name: "the vocabulary admits one authority more", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "if a > admission.RunnerEnforced {", New: "if a > admission.RunnerEnforced+1 {"}}, Kills: "TestClauseEnforcementVocabulary"},
	{Name: "a digest may be upper case", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "(c < 'a' || c > 'f')", New: "(c < 'A' || c > 'f')"}}, Kills: "TestIsDigest"},
	{Name: "a digest may be short", File: "evidence.go",
		Edits: []mutation.Edit{{Old: "if !ok || len(h) != 64 {", New: "if !ok || len(h) == 0 {"}}, Kills: "TestIsDigest"},
	{Name: "Check ignores the materialization revision", File: "provider.go",
		Edits: []mutation.Edit{{Old: ` || d.MaterializationRevision == ""`, New: ""}}, Kills: "TestCheck"},
	{Name: "Check skips the capability vocabulary", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if err := d.Capability.Check(); err != nil {", New: "if err := d.Capability.Check(); false && err != nil {"}}, Kills: "TestCheck"},
	{Name: "Check skips the placement cap", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if err := admission.CheckPlacement(d.Placement, d.Capability); err != nil {", New: "if err := admission.CheckPlacement(d.Placement, d.Capability); false && err != nil {"}}, Kills: "TestCheck"},
	{Name: "Check ignores members", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if d.Members.Snapshots != d.Capability.Snapshots || d.Members.ListDir != d.Capability.ListDir {", New: "if false {"}}, Kills: "TestCheck"},
	{Name: "Check accepts contradictory gaps", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if d.Gaps.NoStdin && d.Gaps.StdinNoEOF {", New: "if false {"}}, Kills: "TestCheck"},
	{Name: "CheckACP accepts no stdin", File: "provider.go",
		Edits: []mutation.Edit{{Old: "case d.Gaps.NoStdin:", New: "case false:"}}, Kills: "TestCheckACP"},
	{Name: "CheckACP accepts stdin without EOF", File: "provider.go",
		Edits: []mutation.Edit{{Old: "case d.Gaps.StdinNoEOF:", New: "case false:"}}, Kills: "TestCheckACP"},
	{Name: "Grade returns the advertisement", File: "provider.go",
		Edits: []mutation.Edit{{Old: "return conformance.EffectiveGrade(d.Identity, d.Capability.EgressCertification, receipt)", New: "_ = conformance.EffectiveGrade; return d.Capability.EgressCertification"}}, Kills: "TestGradeIsCapped"},
	{Name: "Slot admits a second process", File: "slot.go",
		Edits: []mutation.Edit{{Old: "if s.held {", New: "if false {"}}, Kills: "TestSlot"},
	{Name: "Slot opens after Destroy", File: "slot.go",
		Edits: []mutation.Edit{{Old: "if s.destroyed {", New: "if false {"}}, Kills: "TestSlot"},
	{Name: "members discovered by trial", File: "optional.go",
		Edits: []mutation.Edit{{Old: "if !declared {", New: "if _, ok := inst.(T); !declared && !ok {"}}, Kills: "TestMembersAreDeclaredNotDiscovered"},
	{Name: "evidence decoded leniently", File: "evidence_json.go",
		Edits: []mutation.Edit{{Old: "if err := strictjson.Unmarshal(data, &ev, strictjson.Options{MaxDepth: 8, MaxBytes: MaxEvidenceBytes}); err != nil {", New: "if err := json.Unmarshal(data, &ev); err != nil {"},
			{Old: "\"github.com/checkfu/checkfu/internal/strictjson\"", New: "\"encoding/json\""}}, Kills: "TestParseEvidence"},
}
