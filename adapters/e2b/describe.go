package e2b

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter. It changes whenever
// what the adapter declares or does changes.
const Revision = "1"

// Identity returns this adapter's exact (provider, provider_revision) pair.
// The Worker-hosted runner's E2B adapter is a separate identity
// ([WorkerIdentity]): a receipt for one never grades the other.
// It is a function, not a variable, so no package in the binary can
// change what the adapter reports; each call returns a new value.
func Identity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:e2b-provider", Revision: Revision}
}

// WorkerIdentity returns the Worker-hosted runner's E2B adapter: the same
// vendor, a different exact revision, separate evidence.
func WorkerIdentity() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: "checkfu:e2b-worker-provider", Revision: Revision}
}

// MaterializationRevision names the code that materializes a sandbox.
const MaterializationRevision = "e2b-materialize-1"

// Placement is in-process: the adapter is code of the trusted Runner,
// which talks to the vendor's API as the Docker adapter talks to its
// engine, so its capability and evidence are Runner-authored constants
// and nothing crosses acp/wire. The vendor runs the sandbox, which is
// why no axis claims more than provider_attested (the vendor's word).
const Placement = admission.PlacementInProcess

// Capability returns what this revision can do, on every admission axis.
//
// Enforcement: E2B's Firecracker microVM is its process isolation, its
// timeout and kill its lifetime, its allowOut filter its network policy:
// each is E2B's word (provider_attested). A template is a mutable name,
// not a digest, so the image axis is unenforced; the adapter sets no
// resource limits (the template's are E2B's, and unreported); the root
// filesystem is writable, no mount plan is applied, the sandbox user may
// use sudo and there is no system-call filter the adapter can set.
//
// EgressCertification is advisory_filter, for [AdvisoryReason]; no
// receipt can lift it while the API has one flat list.
func Capability() admission.RunnerProviderCapability {
	return vendorkit.Capability("e2b", "allowlist", "none", "unrestricted")
}

// Gaps returns what envd's process API lacks of the contract: only
// KillLeaderOnly. SendSignal reaches the process, not its process
// group, so a child it started lives until Destroy kills the sandbox;
// the process's stream still ends with it. stdin (SendInput and
// CloseStdin), separate stdout and stderr, and bytes (base64 in the
// JSON) are the full contract.
// A function, not a variable, for the same reason as [Identity].
func Gaps() adapters.Gaps { return adapters.Gaps{KillLeaderOnly: true} }
