package egress

import "net/netip"

// The special-purpose address tables below were reviewed on 2026-11-30
// against the IANA IPv4 Special-Purpose Address Registry and the IANA IPv6
// Special-Purpose Address Registry (last updated 2025-10-09), plus the IPv4
// multicast and reserved blocks that the special-purpose registry does not
// list. Every block whose "Globally Reachable" column is not plainly True is
// here, and so are a few anycast service blocks that are nominally global
// (AS112, AMT, the 6to4 relay anycast): no workload or provider request has
// a reason to reach them, and refusing too much is the safe error.
//
// When the registries change, update the tables, the date above and the
// edge rows in addr_test.go together.

// nonPublic4 lists every IPv4 block that is not globally routable unicast.
var nonPublic4 = [...]netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (RFC 791)
	netip.MustParsePrefix("10.0.0.0/8"),      // private use (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, CGNAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback (RFC 1122)
	netip.MustParsePrefix("169.254.0.0/16"),  // link local, cloud metadata (RFC 3927)
	netip.MustParsePrefix("172.16.0.0/12"),   // private use (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments, incl. 192.0.0.192 metadata (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1 documentation (RFC 5737)
	netip.MustParsePrefix("192.31.196.0/24"), // AS112-v4 (RFC 7535)
	netip.MustParsePrefix("192.52.193.0/24"), // AMT (RFC 7450)
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),  // private use (RFC 1918)
	netip.MustParsePrefix("192.175.48.0/24"), // direct delegation AS112 (RFC 7534)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2 documentation (RFC 5737)
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3 documentation (RFC 5737)
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast (RFC 5771)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, incl. 255.255.255.255 broadcast (RFC 1112, RFC 919)
}

// globalUnicast6 is the only IPv6 block IANA allocates global unicast
// addresses from (RFC 4291). Everything outside it is refused before the
// table is consulted: unspecified, loopback, IPv4-mapped and
// IPv4-compatible addresses, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
// discard-only 100::/64, the dummy prefix 100:0:0:1::/64, SRv6 5f00::/16,
// unique local fc00::/7, link local fe80::/10, site local fec0::/10 and
// multicast ff00::/8. This positive check is what keeps a forgotten row from
// becoming an allowance (an address like [::] is refused because it is not
// in 2000::/3, not because some row names it).
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// nonPublic6 lists the blocks inside 2000::/3 that are still not globally
// routable unicast, or that embed an IPv4 address.
var nonPublic6 = [...]netip.Prefix{
	netip.MustParsePrefix("2001::/23"),         // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, AMT, AS112-v6, ORCHID, drone RID, anycast services (RFC 2928)
	netip.MustParsePrefix("2001:db8::/32"),     // documentation (RFC 3849)
	netip.MustParsePrefix("2002::/16"),         // 6to4, embeds an IPv4 address (RFC 3056)
	netip.MustParsePrefix("2620:4f:8000::/48"), // direct delegation AS112 (RFC 7534)
	netip.MustParsePrefix("3fff::/20"),         // documentation (RFC 9637)
}

// IsPublic reports whether addr is a globally routable unicast address: an
// address a request to "the public internet" may reach.
//
// It is false for the zero Addr, for any address with a zone, for every
// block of the IANA special-purpose registries that is not globally
// reachable (private, loopback, link local and cloud metadata, CGNAT,
// documentation, benchmarking, multicast, reserved), and for every IPv6
// address that embeds an IPv4 address (NAT64, 6to4, Teredo,
// IPv4-compatible), because the embedded address is what the network
// would reach. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is unmapped
// first and judged as the IPv4 address it is.
//
// It refuses more than the registries do, on purpose, and only where no
// workload or provider has a reason to go: the whole of 192.0.0.0/24,
// including 192.0.0.9/32 (Port Control Protocol anycast, RFC 7723) and
// 192.0.0.10/32 (TURN anycast, RFC 8155), which the registry marks
// globally reachable; the AS112 blocks 192.31.196.0/24 and
// 192.175.48.0/24, the AMT block 192.52.193.0/24 and the deprecated 6to4
// relay anycast 192.88.99.0/24; and, in IPv6, all of 2001::/23, including
// its globally reachable entries (AMT 2001:3::/32, AS112-v6 2001:4:112::/48,
// ORCHIDv2 2001:20::/28, drone identifiers 2001:30::/28, ...), and
// 2620:4f:8000::/48 (AS112). Refusing too much is the safe error.
//
// IsPublic is pure and allocation-free.
func IsPublic(addr netip.Addr) bool {
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	addr = addr.Unmap()
	if addr.Is4() {
		for _, p := range nonPublic4 {
			if p.Contains(addr) {
				return false
			}
		}
		return true
	}
	if !globalUnicast6.Contains(addr) {
		return false
	}
	for _, p := range nonPublic6 {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
