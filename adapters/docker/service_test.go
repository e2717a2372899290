package docker

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestStartServiceRefusesBadSpecs pins the refusals that need no engine:
// a service without a name, image or command, on an unknown network, or
// on an address outside the outer network or taken by the topology.
func TestStartServiceRefusesBadSpecs(t *testing.T) {
	a := &Allowlist{outer: netip.MustParsePrefix("198.18.41.0/24"), slot: 20}
	ok := ServiceSpec{Name: "x", Image: "img", Cmd: []string{"true"}, Network: ServiceOuter, IP: netip.MustParseAddr("198.18.41.9")}
	for name, mod := range map[string]func(*ServiceSpec){
		"no name":         func(s *ServiceSpec) { s.Name = "" },
		"no image":        func(s *ServiceSpec) { s.Image = "" },
		"no command":      func(s *ServiceSpec) { s.Cmd = nil },
		"unknown network": func(s *ServiceSpec) { s.Network = "host" },
		"outside":         func(s *ServiceSpec) { s.IP = netip.MustParseAddr("198.18.40.9") },
		"the gateway":     func(s *ServiceSpec) { s.IP = netip.MustParseAddr("198.18.41.1") },
		"the guard":       func(s *ServiceSpec) { s.IP = netip.MustParseAddr("198.18.41.2") },
	} {
		s := ok
		mod(&s)
		if _, err := a.StartService(context.Background(), s); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: %v, want config_invalid", name, err)
		}
	}
}
