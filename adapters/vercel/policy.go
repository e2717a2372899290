package vercel

import (
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// This file is pure: no I/O.

// A NetworkPolicy is Vercel Sandbox's network policy: a mode
// ("deny-all", "allow-all") or a custom object of allowed domains and
// subnet lists, in which a denied subnet beats every allowance and
// traffic not allowed is denied.
type NetworkPolicy struct {
	// Mode is "deny-all" or "allow-all"; empty for a custom policy.
	Mode string
	// AllowDomains are allowed domains (no port).
	AllowDomains []string
	// AllowSubnets are CIDRs reached on every port, bypassing the
	// domain list.
	AllowSubnets []string
	// DenySubnets are CIDRs never reached; they beat every allowance.
	DenySubnets []string
}

// nonPublicIPv4 and nonPublicIPv6 are the tables [NonPublicIPv4] and
// [NonPublicIPv6] return copies of. They are not exported, so no
// importer can narrow what "unrestricted" keeps out.
var (
	nonPublicIPv4 = [...]string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24",
		"192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	}
	nonPublicIPv6 = [...]string{"2001::/23", "2001:db8::/32", "2002::/16", "2620:4f:8000::/48", "3fff::/20"}
)

// NonPublicIPv4 returns the IPv4 ranges "unrestricted" keeps out: the
// egress package's non-public table (a test checks they agree with
// egress.IsPublic). Each call returns a new slice.
func NonPublicIPv4() []string { return slices.Clone(nonPublicIPv4[:]) }

// NonPublicIPv6 returns the IPv6 ranges "unrestricted" keeps out, within
// 2000::/3 (global unicast), the only IPv6 it reaches. Each call returns
// a new slice.
func NonPublicIPv6() []string { return slices.Clone(nonPublicIPv6[:]) }

// MapPolicy maps the workload's compiled network policy onto Vercel's,
// exactly or not at all. It is pure.
//
//   - none: deny-all. Exact.
//   - unrestricted: a custom policy allowing the subnets 0.0.0.0/0 and
//     2000::/3 on every port and denying every non-public range; denied
//     subnets beat allowances, so this is the public internet and never a
//     private address. Exact, up to Vercel resolving and connecting.
//   - allowlist: refused with [CodeNetworkPolicyInexpressible]. The
//     policy's entries are hosts on one port, and Vercel's domain list
//     carries no port: any entry would widen the policy.
func MapPolicy(workload *egress.CompiledPolicy) (NetworkPolicy, error) {
	if workload == nil || workload.Type() == "" {
		return NetworkPolicy{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: no network policy to map")
	}
	switch workload.Type() {
	case egress.PolicyNone:
		return NetworkPolicy{Mode: "deny-all"}, nil
	case egress.PolicyUnrestricted:
		return NetworkPolicy{
			AllowSubnets: []string{"0.0.0.0/0", "2000::/3"},
			DenySubnets:  slices.Concat(nonPublicIPv4[:], nonPublicIPv6[:]),
		}, nil
	}
	hosts := workload.AllowedHosts()
	first := ""
	if len(hosts) > 0 {
		first = hosts[0].String()
	}
	return NetworkPolicy{}, checkfu.Refuse(CodeNetworkPolicyInexpressible, "vercel: %s: Vercel's domain list carries no port, so an allowlist of %d host:port entries cannot be written without widening it", checkfu.Quote(first), len(hosts))
}

// wire returns the request form of p (the SDK's NetworkPolicy: a mode
// object, or {allow, subnets}).
func (p NetworkPolicy) wire() map[string]any {
	if p.Mode != "" {
		return map[string]any{"mode": p.Mode}
	}
	out := map[string]any{}
	if len(p.AllowDomains) > 0 {
		out["allow"] = p.AllowDomains
	}
	sub := map[string]any{}
	if len(p.AllowSubnets) > 0 {
		sub["allow"] = p.AllowSubnets
	}
	if len(p.DenySubnets) > 0 {
		sub["deny"] = p.DenySubnets
	}
	if len(sub) > 0 {
		out["subnets"] = sub
	}
	return out
}
