package vendorkit_test

import (
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
)

func TestCapability(t *testing.T) {
	modes := []string{"none", "unrestricted"}
	c := vendorkit.Capability("acme", modes...)
	modes[0] = "allowlist"
	if c.NetworkModes[0] != "none" {
		t.Error("Capability kept the caller's slice of network modes")
	}
	if len(c.Drivers) != 1 || c.Drivers[0] != "acme" || len(c.Platforms) != 1 || c.Platforms[0] != "linux/amd64" ||
		len(c.ImageModes) != 1 || c.ImageModes[0] != "fixed" || len(c.LaunchKinds) != 1 || c.LaunchKinds[0] != "process" {
		t.Errorf("Capability = %+v", c)
	}
	if c.EgressCertification != checkfu.AdvisoryFilter {
		t.Errorf("EgressCertification = %v, want advisory_filter", c.EgressCertification)
	}
	for a := range c.Enforcement {
		var want admission.Authority
		switch admission.Axis(a) {
		case admission.AxisNetworkPolicy, admission.AxisProcessIsolation, admission.AxisLifetime:
			want = admission.ProviderAttested
		}
		if c.Enforcement[a] != want {
			t.Errorf("Enforcement[%v] = %v, want %v", admission.Axis(a), c.Enforcement[a], want)
		}
	}
}
