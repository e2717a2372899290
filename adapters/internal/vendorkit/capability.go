package vendorkit

import (
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// Capability returns the capability of a vendor adapter whose sandbox
// the vendor runs: driver's processes on linux/amd64 from a fixed image,
// in one of networkModes (copied). Network policy, process isolation and
// lifetime are the vendor's word (provider_attested); no other axis is
// enforced, and egress stays advisory_filter, since Checkfu can check
// nothing the vendor enforces.
func Capability(driver string, networkModes ...string) admission.RunnerProviderCapability {
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisNetworkPolicy, admission.AxisProcessIsolation, admission.AxisLifetime} {
		e[a] = admission.ProviderAttested
	}
	return admission.RunnerProviderCapability{
		Drivers:             []string{driver},
		LaunchKinds:         []string{"process"},
		Platforms:           []string{"linux/amd64"},
		NetworkModes:        slices.Clone(networkModes),
		ImageModes:          []string{"fixed"},
		Enforcement:         e,
		EgressCertification: checkfu.AdvisoryFilter,
	}
}
