package vercel

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter.
const Revision = "1"

// Identity returns this adapter's exact (provider, provider_revision) pair;
// the Worker-hosted runner's Vercel adapter is [WorkerIdentity], a
// separate pair: a receipt for one never grades the other.
// It is a function, not a variable, so no package in the binary can
// change what the adapter reports; each call returns a new value.
func Identity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:vercel-provider", Revision: Revision}
}

// WorkerIdentity returns the Worker-hosted runner's Vercel adapter.
func WorkerIdentity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:vercel-worker-provider", Revision: Revision}
}

// MaterializationRevision names the code that materializes a sandbox.
const MaterializationRevision = "vercel-materialize-1"

// Placement is in-process: the adapter is code of the trusted Runner,
// which talks to the vendor's API as the Docker adapter talks to its
// engine, so its capability and evidence are Runner-authored constants
// and nothing crosses acp/wire. The vendor runs the sandbox, which is
// why no axis claims more than provider_attested (the vendor's word).
const Placement = admission.PlacementInProcess

// AdvisoryReason is why Vercel stays at advisory_filter.
const AdvisoryReason = "Vercel's firewall resolves, connects and filters on Vercel's side, where Checkfu cannot construct the adversarial cases (connect_time_public_address, default_deny) nor see the authorities (authority_separation)"

// Capability returns what this revision can do. Network modes: none and
// unrestricted ([MapPolicy] refuses allowlists). Vercel's Firecracker
// microVM, timeout and firewall are Vercel's word; the image is Vercel's
// choice (no digest), the adapter sets no resource limits, and the
// filesystem, mounts, privileges (sudo is available) and system calls
// are not under its control.
func Capability() admission.RunnerProviderCapability {
	return vendorkit.Capability("vercel", "none", "unrestricted")
}

// Gaps returns what Vercel's ordinary commands lack of the contract's
// stdio and kill, the machine-readable form of [StdioCaveats]: no stdin
// (NoStdin: a write is refused with [CodeStdinUnsupported], the
// process reads end of input at once; the interactive path is a PTY,
// which would merge stdout and stderr, so it is not used), output
// carried as JSON strings (TextOnly: bytes that are not UTF-8 are not
// carried exactly), and a Kill that signals the command only
// (KillLeaderOnly: a child lives until the sandbox is stopped, and one
// holding stdout open keeps the stream, and Wait, from ending). With
// NoStdin, [adapters.CheckACP] refuses to run an ACP agent here.
// A function, not a variable, for the same reason as [Identity].
func Gaps() adapters.Gaps { return adapters.Gaps{NoStdin: true, TextOnly: true, KillLeaderOnly: true} }
