package daytona

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// This file is pure: no I/O.

// A Network is a Daytona sandbox's network settings: the members of
// CreateSandbox that decide egress.
type Network struct {
	// NetworkBlockAll blocks every destination; it wins over the lists.
	NetworkBlockAll bool
	// NetworkAllowList is the comma-separated IPv4 CIDR list (at most
	// ten), each admitted on every port and protocol; empty for none.
	NetworkAllowList string
	// DomainAllowList is the comma-separated domain list, without ports;
	// empty for none.
	DomainAllowList string
}

// MapPolicy maps the workload's compiled network policy onto Daytona's
// network settings, exactly or not at all. It is pure.
//
//   - none: networkBlockAll. Exact.
//   - unrestricted: refused with [CodeAllowlistInexpressible]. Daytona
//     has no deny list, so "the public internet and never a private
//     address" cannot be written; the public IPv4 space needs far more
//     than ten CIDRs.
//   - allowlist: refused with [CodeAllowlistInexpressible]. Every entry
//     of the policy is a host on one port (api.example.com means port
//     443 only), while Daytona's domain list carries no port and its
//     CIDR list admits every port: either would widen the policy.
//
// The policy union has no address member, so the ten-CIDR list is never
// needed for a workload policy; a plane destination reached by address
// is not in the union either. Nothing is widened to fit.
func MapPolicy(workload *egress.CompiledPolicy) (Network, error) {
	if workload == nil || workload.Type() == "" {
		return Network{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: no network policy to map")
	}
	switch workload.Type() {
	case egress.PolicyNone:
		return Network{NetworkBlockAll: true}, nil
	case egress.PolicyUnrestricted:
		return Network{}, checkfu.Refuse(CodeAllowlistInexpressible, "daytona: unrestricted means public addresses only, and Daytona has no deny list to keep private ranges out")
	}
	hosts := workload.AllowedHosts()
	first := ""
	if len(hosts) > 0 {
		first = hosts[0].String()
	}
	return Network{}, checkfu.Refuse(CodeAllowlistInexpressible, "daytona: %s: Daytona's domain list carries no port and its CIDR list admits every port; an allowlist of %d host:port entries cannot be written without widening it", checkfu.Quote(first), len(hosts))
}
