// Package egress decides and makes outbound HTTP requests without letting
// a hijacked caller reach anything it was not granted.
//
// It has two halves. The rule engine is pure: [ParseRules] and [NewRules]
// turn a Connection's 1 to 32 egress rules into canonical, immutable
// [Rules]; [CanonicalRequest] brings an outbound request into the one
// canonical [Request] form; [Rules.Decide] allows it by rule index or
// refuses it with a typed [checkfu.Refusal]. The network half classifies
// addresses, dials only public ones and makes the credentialed request.
//
// Invariants of the rule engine:
//
//   - Rules are refused when parsed, never later: zero rules, more than
//     [MaxRules], unknown or repeated JSON keys, trailing data and every
//     rule that does not canonicalise are [CodeRulesInvalid].
//   - Canonicalisation happens once, at parse time, and is idempotent:
//     hosts are lower-case IDNA A-labels with no trailing dot and never IP
//     literals; a wildcard is a leading "*." label that matches exactly one
//     label and never the apex, and is refused over a public suffix; ports
//     are explicit (1-65535); path prefixes are canonical escaped paths
//     matched on segment boundaries; methods are upper-case tokens; header
//     names are canonical.
//   - What is matched is what is dialled is what is sent as Host: the
//     Request's Host, [Request.Authority] and [Request.URL] are all built
//     from the one canonical host and port. A name IDNA maps to an IP
//     literal ("①②⑦.0.0.1") or that resolvers read as IPv4 ("127.1") is
//     refused, never matched as a name.
//   - Decide is pure and total: no I/O (the host is matched before any DNS
//     lookup, so a name no rule names never reaches a resolver), no panic,
//     no allocation when it allows. A nil or zero Rules allows nothing;
//     the zero [Decision] denies.
//   - Headers are default deny: a request passes only if every header it
//     carries is listed by the rule that allows it. The fixed denylist
//     ([HeaderDenied]: routing, authorization, cookie, method-override,
//     hop-by-hop and cloud-metadata headers, and every name with an
//     underscore) wins over any allowlist: a rule listing such a header is
//     refused at parse time, and a request carrying one is refused with
//     [CodeHeaderDenied] whatever the rules say.
//   - A request is allowed when some rule allows all of it; rule order
//     only chooses the index reported (the lowest). Duplicate rules are
//     refused.
//   - Refusal messages name the method, host, port and header names of a
//     request, never its path, query or header values.
//
// Package egresstest holds rapid generators for rules, hosts and requests
// and a property suite for anything that decides requests.
//
// Invariants of the network half:
//
//   - [IsPublic] is true only for globally routable unicast addresses, by
//     a dated table of the IANA IPv4 and IPv6 special-purpose registries
//     under a positive check (IPv6 must lie in 2000::/3). It refuses a few
//     blocks the registries mark globally reachable, on purpose (192.0.0.9
//     and 192.0.0.10 among them; see IsPublic). Mapped addresses
//     are unmapped first; addresses that embed IPv4 (NAT64, 6to4, Teredo,
//     IPv4-compatible) and zoned addresses are never public.
//   - A [Dialer] resolves the rooted name (no resolv.conf search list,
//     domain or ndots applies) and sends no DNS question about any other
//     name, so the name resolved is the name matched. It resolves once and refuses the whole name when any
//     answer is not public: one private answer poisons the name, so a
//     rebinding resolver cannot be outwaited by retrying. It then dials the
//     checked literals, and checks each socket address again at connect
//     time, so nothing slips between check and connect. It never dials the
//     guard's own listener, nor an address of the host it runs on, read
//     from its interfaces at every dial (traffic to it stays on the host
//     and passes no network filter); this covers the test blocks treated
//     as public too, loopback excepted. The only exception to "public only" is
//     DialerConfig.TreatAsPublicForTesting, limited to loopback and
//     198.18.0.0/15 test blocks and logged.
//   - A [Client] is the credentialed edge: it has no proxy, never follows a
//     redirect (a 301, 302, 303, 307 or 308, and any other 3xx carrying a
//     Location, is refused with [CodeRedirectRefused], carrying the
//     rechecked target's decision; another 3xx without a Location is
//     returned as a response), dials only through a Dialer, and
//     decides every request with its Rules before any DNS lookup. No field
//     of [ClientConfig] can turn any of this off. [Client.Send] sends an
//     [Allowed] ([Rules.Allow]: a request decided once, ahead of sending)
//     without deciding it again only when the Client's own Rules, holding
//     the same rules, allowed it; it decides any other Allowed, the zero
//     one included, with its Rules first, as [Client.Do] does. The credential is added
//     by the caller's attach hook after the decision, only to an allowed
//     https request, and never reaches the rules or an error.
//   - A [NetworkPolicy] is a closed union (none, unrestricted, allowlist)
//     decoded strictly; presets compile into exact hosts at publication,
//     with the [PresetCatalog] version recorded. A [Guard] enforces a
//     compiled policy for a workload: every mode but none refuses every
//     non-public destination, and none refuses everything. Its CONNECT
//     tunnels are bounded: both ends close at most
//     [DefaultTunnelCloseGrace] after either direction ends, and after
//     [DefaultTunnelIdleTimeout] without a byte moved; at most
//     [DefaultMaxTunnels] are open per guard and
//     [DefaultMaxTunnelsPerSource] per workload source address (each
//     configurable in [GuardConfig]). Idle workload connections are
//     capped by count (a quarter of the connection cap, [IdleShare]):
//     keep-alives between requests, tunnels silent for
//     [DefaultTunnelIdleAfter] and tunnels in their close grace; past
//     it, or when a new connection or tunnel meets a cap, the longest
//     idle is closed first, and a refusal comes only when none is idle.
//     A forwarded exchange is cut after TunnelIdleTimeout without a byte
//     read or written, and a request's line and header are at most
//     [MaxRequestHeaderBytes]. Refusal log lines are paced to
//     [RefusalLogsPerSecond], and every refusal is counted
//     ([MetricGuardRefusals]).
//   - A refusal is always a *checkfu.Refusal (403 with Checkfu-Refusal
//     from the guard); an upstream failure is always an [*UpstreamError]
//     with an [UpstreamCode] (502 from the guard). Neither is ever reported
//     as the other.
package egress
