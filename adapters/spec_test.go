package adapters_test

import (
	"errors"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/egress"
)

// TestCheckSpec: an allowlist spec carries its exact hosts, canonical,
// sorted and distinct, and no other mode carries any.
func TestCheckSpec(t *testing.T) {
	hp := func(h string, p uint16) egress.HostPort { return egress.HostPort{Host: h, Port: p} }
	spec := func(mode string, hosts ...egress.HostPort) adapters.InstanceSpec {
		return adapters.InstanceSpec{ID: "i", NetworkMode: mode, AllowedHosts: hosts}
	}
	for _, s := range []adapters.InstanceSpec{
		spec("none"),
		spec("unrestricted"),
		spec("allowlist", hp("example.com", 443)),
		spec("allowlist", hp("a.example", 80), hp("a.example", 443), hp("b.example", 22)),
	} {
		if err := adapters.CheckSpec(s); err != nil {
			t.Errorf("CheckSpec(%s %v) = %v, want nil", s.NetworkMode, s.AllowedHosts, err)
		}
	}
	for name, s := range map[string]adapters.InstanceSpec{
		"allowlist without hosts":  spec("allowlist"),
		"hosts with none":          spec("none", hp("example.com", 443)),
		"hosts with unrestricted":  spec("unrestricted", hp("example.com", 443)),
		"hosts with an empty mode": spec("", hp("example.com", 443)),
		"upper-case host":          spec("allowlist", hp("Example.com", 443)),
		"port zero":                spec("allowlist", hp("example.com", 0)),
		"an IP literal":            spec("allowlist", hp("198.18.0.1", 443)),
		"a wildcard":               spec("allowlist", hp("*.example.com", 443)),
		"empty host":               spec("allowlist", hp("", 443)),
		"a port inside the host":   spec("allowlist", hp("example.com:80", 443)),
		"unsorted hosts":           spec("allowlist", hp("b.example", 443), hp("a.example", 443)),
		"unsorted ports":           spec("allowlist", hp("a.example", 443), hp("a.example", 80)),
		"a repeated host":          spec("allowlist", hp("a.example", 443), hp("a.example", 443)),
	} {
		err := adapters.CheckSpec(s)
		var r *checkfu.Refusal
		if !errors.Is(err, checkfu.CodeConfigInvalid) || !errors.As(err, &r) {
			t.Errorf("CheckSpec with %s = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
}
