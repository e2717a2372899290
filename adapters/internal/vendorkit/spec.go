package vendorkit

import (
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

// An Offer is what one vendor adapter can make of an instance spec.
type Offer struct {
	// Vendor prefixes every error ("e2b").
	Vendor string
	// Capability is the adapter's advertisement: its network modes and
	// platforms.
	Capability admission.RunnerProviderCapability
	// Image is the one root image a spec may name; "" admits none.
	Image string
	// Allowlist is the compiled policy network mode "allowlist" applies;
	// nil refuses that mode.
	Allowlist *egress.CompiledPolicy
}

// CheckInstance returns the compiled policy an instance of spec applies.
// A network mode, platform, image or limit outside o is refused with
// adapters.CodeSpecUnsupported.
func CheckInstance(o Offer, spec adapters.InstanceSpec) (*egress.CompiledPolicy, error) {
	if !slices.Contains(o.Capability.NetworkModes, spec.NetworkMode) {
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "%s: network mode %s is not one of %s", o.Vendor, checkfu.Quote(spec.NetworkMode), o.Capability.NetworkModes)
	}
	var policy *egress.CompiledPolicy
	var err error
	switch spec.NetworkMode {
	case "none":
		policy, err = egress.NoNetwork().Compile(nil)
	case "unrestricted":
		policy, err = egress.UnrestrictedNetwork().Compile(nil)
	case "allowlist":
		policy = o.Allowlist
	}
	if err != nil || policy == nil {
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "%s: network mode %s is not one this provider applies", o.Vendor, checkfu.Quote(spec.NetworkMode))
	}
	if spec.Platform != "" && !slices.Contains(o.Capability.Platforms, spec.Platform) || spec.RootImage != "" && spec.RootImage != o.Image || spec.Limits != (adapters.Limits{}) {
		return nil, checkfu.Refuse(adapters.CodeSpecUnsupported, "%s: the spec asks for a platform, image or limit this provider cannot apply", o.Vendor)
	}
	return policy, nil
}
