package daytona

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// Revision is the provider revision of this adapter.
const Revision = "1"

// Identity is this adapter's exact (provider, provider_revision) pair.
// The Worker-hosted runner's Daytona adapter is [WorkerIdentity]: a
// receipt for one never grades the other.
var Identity = checkfu.ProviderRevision{Provider: "checkfu:daytona-provider", Revision: Revision}

// WorkerIdentity is the Worker-hosted runner's Daytona adapter.
var WorkerIdentity = checkfu.ProviderRevision{Provider: "checkfu:daytona-worker-provider", Revision: Revision}

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
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisNetworkPolicy, admission.AxisProcessIsolation, admission.AxisLifetime} {
		e[a] = admission.ProviderAttested
	}
	return admission.RunnerProviderCapability{
		Drivers:             []string{"daytona"},
		LaunchKinds:         []string{"process"},
		Platforms:           []string{"linux/amd64"},
		NetworkModes:        []string{"none"},
		ImageModes:          []string{"fixed"},
		Enforcement:         e,
		EgressCertification: checkfu.AdvisoryFilter,
	}
}
