package e2b

import (
	"slices"
	"strconv"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// This file is pure: no I/O.

// AdvisoryReason is why E2B can never be graded above advisory_filter,
// stated in its capability and in every process's evidence.
const AdvisoryReason = "E2B's network API has one flat allowOut list: the workload's and the plane's destinations are flattened into it, so the two authorities cannot be told apart (authority_separation cannot hold), and E2B, not Checkfu, resolves and connects (connect_time_public_address and default_deny are E2B's word)"

// A Network is an E2B sandbox's network configuration: the members of
// NewSandbox that decide egress.
type Network struct {
	// AllowInternetAccess is allow_internet_access; false is denyOut
	// 0.0.0.0/0.
	AllowInternetAccess bool
	// AllowOut is network.allowOut: domains, IPs or CIDRs. An allowed
	// entry beats a denied one.
	AllowOut []string
	// DenyOut is network.denyOut: IPs or CIDRs.
	DenyOut []string
	// Caveats say, one line each, what E2B grants or leaves unchecked
	// beyond the policy. They are copied into the evidence.
	Caveats []string
}

// nonPublicV4 are the IPv4 ranges that are never public, the egress
// package's table (TestDenyOutAgreesWithEgress checks it against
// egress.IsPublic): "unrestricted" means the public internet only.
var nonPublicV4 = []string{
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24",
	"192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24",
	"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
}

// Caveats recorded by MapPolicy.
const (
	caveatFlattened  = "authority: workload and plane destinations share one allowOut list"
	caveatPorts      = "ports: a domain in allowOut admits both port 80 (HTTP Host) and port 443 (TLS SNI)"
	caveatResolver   = "dns: E2B admits its resolver 8.8.8.8 whenever allowOut names a domain"
	caveatAddress    = "address: E2B resolves allowed domains itself; a private answer is not refused"
	caveatAllowWins  = "precedence: allowOut beats denyOut, so a listed domain that resolves to a private range is reached"
	caveatIPv6       = "ipv6: the non-public denyOut ranges are IPv4 only"
	planeNoneCaveat  = "none: the plane's destinations stay reachable from the sandbox"
	maxAllowOutEntry = 255
)

// MapPolicy maps the workload's compiled network policy and the plane's
// destinations (the hosts the Runner's plane traffic from inside the
// sandbox needs, such as its capability gateway; nil for none) onto E2B's
// network configuration. It is pure.
//
//   - none: allow_internet_access false; the plane's hosts, if any, in
//     allowOut.
//   - unrestricted: allow_internet_access true, and every non-public
//     IPv4 range in denyOut.
//   - allowlist: allow_internet_access false and each host in allowOut.
//     A host on a port other than 80 or 443 is refused with
//     [CodePolicyInexpressible]: E2B filters other ports by address, so
//     naming the host would grant nothing and naming its addresses would
//     grant every name behind them.
//
// What E2B then grants beyond the policy is listed in Network.Caveats,
// never hidden. The flattening of the two authorities into one list is
// why the grade stays advisory_filter ([AdvisoryReason]).
func MapPolicy(workload *egress.CompiledPolicy, plane []egress.HostPort) (Network, error) {
	if workload == nil || workload.Type() == "" {
		return Network{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: no network policy to map")
	}
	var n Network
	hosts, err := domains(plane)
	if err != nil {
		return Network{}, err
	}
	switch workload.Type() {
	case egress.PolicyNone:
		if len(hosts) > 0 {
			n.Caveats = append(n.Caveats, planeNoneCaveat)
		}
	case egress.PolicyUnrestricted:
		n.AllowInternetAccess = true
		n.DenyOut = slices.Clone(nonPublicV4)
		n.Caveats = append(n.Caveats, caveatIPv6)
	case egress.PolicyAllowlist:
		w, err := domains(workload.AllowedHosts())
		if err != nil {
			return Network{}, err
		}
		hosts = append(hosts, w...)
	}
	slices.Sort(hosts)
	n.AllowOut = slices.Compact(hosts)
	if len(n.AllowOut) > 0 {
		n.Caveats = append(n.Caveats, caveatFlattened, caveatPorts, caveatResolver, caveatAddress)
		if n.AllowInternetAccess {
			n.Caveats = append(n.Caveats, caveatAllowWins)
		}
	}
	return n, nil
}

// domains returns the allowOut entries of hs, refusing ports E2B cannot
// filter by name.
func domains(hs []egress.HostPort) ([]string, error) {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if h.Port != 80 && h.Port != 443 {
			return nil, checkfu.Refuse(CodePolicyInexpressible, "e2b: %s: E2B filters by name on ports 80 and 443 only, not port %s", checkfu.Quote(h.Host), strconv.Itoa(int(h.Port)))
		}
		if len(h.Host) > maxAllowOutEntry || h.Host == "" {
			return nil, checkfu.Refuse(CodePolicyInexpressible, "e2b: %s is not a host allowOut can hold", checkfu.Quote(h.Host))
		}
		out = append(out, h.Host)
	}
	return out, nil
}
