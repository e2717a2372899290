package adapters

import "github.com/checkfu/checkfu"

// Refusal codes. Every error this package returns for a refused
// provider, instance, optional member or evidence is a
// [*checkfu.Refusal] carrying one of these codes, or one of two shared
// codes: checkfu.CodeConfigInvalid for a spec the caller built wrong, and
// acp/wire's process_already_open for a second live process on one
// instance (the same condition as on the wire, so the same code).
const (
	// CodeProviderInvalid: a provider's Description is not one the
	// Runner can admit: an empty identity or materialization revision,
	// a capability outside its vocabulary, an authority its placement
	// may not claim, or optional members that disagree with the
	// capability's snapshots and list_dir axes.
	CodeProviderInvalid checkfu.Code = "provider_invalid"
	// CodeSpecUnsupported: an instance spec asks for something outside
	// what the provider declared (a network mode, platform, image or
	// limit it cannot apply).
	CodeSpecUnsupported checkfu.Code = "spec_unsupported"
	// CodeInstanceDestroyed: an operation on an instance that has been
	// destroyed.
	CodeInstanceDestroyed checkfu.Code = "instance_destroyed"
	// CodeMemberUndeclared: a call to an optional member (snapshots,
	// list_dir, file transfer) the provider did not declare. Optional
	// members are never discovered by trial.
	CodeMemberUndeclared checkfu.Code = "member_undeclared"
	// CodeMemberUnimplemented: the provider declared an optional member
	// but its instance does not implement it: the declaration is false.
	CodeMemberUnimplemented checkfu.Code = "member_unimplemented"
	// CodeEvidenceInvalid: an evidence document is not strict JSON of
	// the Evidence shape ([ParseEvidence]).
	CodeEvidenceInvalid checkfu.Code = "evidence_invalid"
	// CodeEvidenceMismatch: a process's evidence fails one or more
	// clauses of [MatchEvidence]; the message names each.
	CodeEvidenceMismatch checkfu.Code = "evidence_mismatch"
)
