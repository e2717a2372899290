package e2b

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter. It changes whenever
// what the adapter declares or does changes.
const Revision = "1"

// Identity is this adapter's exact (provider, provider_revision) pair.
// The Worker-hosted runner's E2B adapter is a separate identity
// ([WorkerIdentity]): a receipt for one never grades the other.
var Identity = checkfu.ProviderRevision{Provider: "checkfu:e2b-provider", Revision: Revision}

// WorkerIdentity is the Worker-hosted runner's E2B adapter: the same
// vendor, a different exact revision, separate evidence.
var WorkerIdentity = checkfu.ProviderRevision{Provider: "checkfu:e2b-worker-provider", Revision: Revision}

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
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisNetworkPolicy, admission.AxisProcessIsolation, admission.AxisLifetime} {
		e[a] = admission.ProviderAttested
	}
	return admission.RunnerProviderCapability{
		Drivers:             []string{"e2b"},
		LaunchKinds:         []string{"process"},
		Platforms:           []string{"linux/amd64"},
		NetworkModes:        []string{"allowlist", "none", "unrestricted"},
		ImageModes:          []string{"fixed"},
		Enforcement:         e,
		EgressCertification: checkfu.AdvisoryFilter,
	}
}
