package daytona

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter.
const Revision = "1"

// Identity returns this adapter's exact (provider, provider_revision) pair.
// The Worker-hosted runner's Daytona adapter is [WorkerIdentity]: a
// receipt for one never grades the other.
// It is a function, not a variable, so no package in the binary can
// change what the adapter reports; each call returns a new value.
func Identity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: Revision}
}

// WorkerIdentity returns the Worker-hosted runner's Daytona adapter.
func WorkerIdentity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:daytona-worker-provider", Revision: Revision}
}

// MaterializationRevision names the code that materializes a sandbox.
const MaterializationRevision = "daytona-materialize-1"

// Placement is in-process: the adapter is code of the trusted Runner,
// which talks to the vendor's API as the Docker adapter talks to its
// engine, so its capability and evidence are Runner-authored constants
// and nothing crosses acp/wire. The vendor runs the sandbox, which is
// why no axis claims more than provider_attested (the vendor's word).
const Placement = admission.PlacementInProcess

// AdvisoryReason is why Daytona stays at advisory_filter.
const AdvisoryReason = "Daytona enforces its network settings on its own runner (iptables per sandbox) where Checkfu can neither construct the adversarial cases nor see the authorities; none of the three un-self-attestable facts can be shown by Checkfu"

// Capability returns what this revision can do. The only network mode
// is none ([MapPolicy] refuses the others). Enforcement: the container
// isolation, the lifetime (session and sandbox deletion kill the
// process group) and networkBlockAll are Daytona's word; a snapshot is a
// mutable name, not a digest (image unenforced), the adapter sets no
// resource limits, and the filesystem, mounts, privileges and system
// calls are not under its control.
func Capability() admission.RunnerProviderCapability {
	return vendorkit.Capability("daytona", "none")
}

// Gaps returns what a Daytona session lacks of the contract's stdio, the
// machine-readable form of [StdioCaveats]: stdin cannot end (StdinNoEOF:
// Close is refused with [CodeStdinInexpressible]), input and output are
// carried a line at a time (LineFramed: a partial output line arrives
// only with its newline or at the end, gaining one; a partial last
// input line is refused), and the streams carry text (TextOnly: stdin
// must be UTF-8, NUL bytes in output are lost and the prefix bytes split
// a line). Kill deletes the session, which ends the whole process
// group, so Kill has no gap. With StdinNoEOF, [adapters.CheckACP]
// refuses to run an ACP agent here.
// A function, not a variable, for the same reason as [Identity].
func Gaps() adapters.Gaps { return adapters.Gaps{StdinNoEOF: true, LineFramed: true, TextOnly: true} }
