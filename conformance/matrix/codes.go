package matrix

import "github.com/checkfu/checkfu"

// The refusal codes of the matrix. A caller misconfiguration (no engine,
// no binary, no plane credential) is checkfu.CodeConfigInvalid.
const (
	// CodeTopologyFailed means the owned topology (networks, guard, DNS,
	// listeners) could not be built or did not answer its liveness
	// controls, so no case could be observed.
	CodeTopologyFailed checkfu.Code = "topology_failed"
	// CodeProbeFailed means the workload's probe did not run to the end
	// or wrote observations that do not parse.
	CodeProbeFailed checkfu.Code = "probe_failed"
	// CodeMatrixProviderMissing means the matrix has no entry for the
	// named provider.
	CodeMatrixProviderMissing checkfu.Code = "matrix_provider_missing"
	// CodeProviderIncapable means the provider cannot hold a fact by its
	// construction, so the matrix does not run against it; it stays at
	// advisory_filter.
	CodeProviderIncapable checkfu.Code = "provider_incapable"
	// CodeMutantSurvived means a deliberately broken guard or provider
	// left the fact that targets it held (or no case of it failed).
	CodeMutantSurvived checkfu.Code = "mutant_survived"
	// CodeEvidenceFileInvalid means an evidence file is not strict JSON
	// of the Report shape (ParseEvidenceFile).
	CodeEvidenceFileInvalid checkfu.Code = "evidence_file_invalid"
	// CodeEvidenceFileMismatch means an evidence file is not the one a
	// record names: another provider revision or label, other digests,
	// or verdicts that hold other facts than the record's.
	CodeEvidenceFileMismatch checkfu.Code = "evidence_file_mismatch"
	// CodeMutantBuildFailed means a mutant's edit did not apply or its
	// binary did not build.
	CodeMutantBuildFailed checkfu.Code = "mutant_build_failed"
)
