package vercel

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter.
const Revision = "1"

// Identity is this adapter's exact (provider, provider_revision) pair;
// the Worker-hosted runner's Vercel adapter is [WorkerIdentity], a
// separate pair: a receipt for one never grades the other.
var Identity = checkfu.ProviderRevision{Provider: "checkfu:vercel-provider", Revision: Revision}

// WorkerIdentity is the Worker-hosted runner's Vercel adapter.
var WorkerIdentity = checkfu.ProviderRevision{Provider: "checkfu:vercel-worker-provider", Revision: Revision}

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
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisNetworkPolicy, admission.AxisProcessIsolation, admission.AxisLifetime} {
		e[a] = admission.ProviderAttested
	}
	return admission.RunnerProviderCapability{
		Drivers:             []string{"vercel"},
		LaunchKinds:         []string{"process"},
		Platforms:           []string{"linux/amd64"},
		NetworkModes:        []string{"none", "unrestricted"},
		ImageModes:          []string{"fixed"},
		Enforcement:         e,
		EgressCertification: checkfu.AdvisoryFilter,
	}
}
