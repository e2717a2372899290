package egress

import "github.com/checkfu/checkfu"

// Codes of the refusals of this package. Every refusal is a
// [*checkfu.Refusal] carrying one of these (or [checkfu.CodeConfigInvalid]
// for a configuration NewDialer or NewGuard will not build), and works with
// errors.Is(err, code). They are stable: callers branch on them.
//
// [Rules.Decide] checks a request in this order, and its refusal names the
// first check the request fails: the request must be canonical
// ([CodeRequestInvalid]); no header may be on the fixed denylist
// ([CodeHeaderDenied]); some rule must allow the destination
// ([CodeNoRuleMatched]), then the method ([CodeMethodDenied]), then every
// header ([CodeHeaderNotAllowed]). There are no separate port or path
// codes: a rule allows a destination (host, port and path prefix)
// together, and a destination no rule allows is "no_rule_matched".
const (
	// CodeRulesInvalid: a set of egress rules does not parse or does not
	// canonicalise. Rules are refused when they are parsed, never later.
	CodeRulesInvalid checkfu.Code = "rules_invalid"

	// CodeHostInvalid: a host name is not a canonicalisable DNS name: it
	// is empty, too long, has an empty label or a character IDNA does
	// not allow, or it is (or IDNA maps it to) an IP literal.
	CodeHostInvalid checkfu.Code = "host_invalid"
	// CodeRequestInvalid: an outbound request is not in, or cannot be
	// brought into, the one canonical form this package matches, dials
	// and sends (a relative URL, userinfo, a bad port, an ambiguous path
	// encoding, a Host that disagrees with the URL, ...), or the guard
	// was sent something it does not proxy (a request form other than
	// absolute-form and CONNECT, OPTIONS *, a malformed request body).
	CodeRequestInvalid checkfu.Code = "request_invalid"

	// CodeNoRuleMatched: no rule allows the request's host, port and path.
	CodeNoRuleMatched checkfu.Code = "no_rule_matched"
	// CodeMethodDenied: some rule allows the destination, none the method.
	CodeMethodDenied checkfu.Code = "method_denied"
	// CodeHeaderNotAllowed: some rule allows destination and method, but
	// every such rule leaves out a header the request carries.
	CodeHeaderNotAllowed checkfu.Code = "header_not_allowed"
	// CodeHeaderDenied: the request carries a header on the fixed
	// denylist (see [HeaderDenied]). No rule can allow it.
	CodeHeaderDenied checkfu.Code = "header_denied"

	// CodeRedirectRefused: [Client.Do] got a redirect (301, 302, 303, 307
	// or 308, or any other 3xx that carries a Location). The Refusal's
	// Err is a [*RedirectError] carrying the rechecked target's decision.
	CodeRedirectRefused checkfu.Code = "redirect_refused"
	// CodePlaintextCredential: [Client.Do] was given an attach hook for a
	// request whose scheme is not https: a credential is never sent in
	// clear, whatever the rules allow.
	CodePlaintextCredential checkfu.Code = "plaintext_credential"

	// CodeDestinationNotPublic: a destination is, or resolves to, an
	// address that is not public (see [IsPublic]), is an address of the
	// host the Dialer runs on, or is the guard's own listener.
	CodeDestinationNotPublic checkfu.Code = "destination_not_public"

	// CodePolicyInvalid: a network policy document or value is not one of
	// the three members of the union, or a member is malformed.
	CodePolicyInvalid checkfu.Code = "policy_invalid"
	// CodeAllowlistEmpty: an allowlist would reach no host at all (no
	// allowed_hosts and no allow_package_managers; allow_mcp_servers
	// grants no workload host).
	CodeAllowlistEmpty checkfu.Code = "allowlist_empty"
	// CodeEgressDisabled: the policy is "none" (or the zero policy); the
	// workload may reach nothing.
	CodeEgressDisabled checkfu.Code = "egress_disabled"
	// CodeHostNotAllowed: the destination is not in the allowlist.
	CodeHostNotAllowed checkfu.Code = "host_not_allowed"

	// CodeTunnelLimitReached: a CONNECT arrived while the guard already
	// held GuardConfig.MaxTunnels tunnels, or MaxTunnelsPerSource for the
	// workload's source address.
	CodeTunnelLimitReached checkfu.Code = "tunnel_limit_reached"
	// CodeConnectionLimitReached: a connection arrived while the guard
	// already held GuardConfig.MaxConnections workload connections; it
	// is answered 503 and closed.
	CodeConnectionLimitReached checkfu.Code = "connection_limit_reached"
)

// Upstream failure codes ([UpstreamCode], a type of its own so that no
// errors.Is confuses a failure with a refusal). They are stable: callers
// branch on them.
const (
	// CodeDNSFailed means the destination's name did not resolve: no
	// answer, NXDOMAIN, a timeout or an unreachable resolver.
	CodeDNSFailed UpstreamCode = "dns_failed"
	// CodeUpstreamConnectFailed means every permitted address of the
	// destination refused or timed out the TCP connection.
	CodeUpstreamConnectFailed UpstreamCode = "upstream_connect_failed"
	// CodeUpstreamFailed means the connection was made but the exchange
	// failed: TLS handshake, a reset, a malformed or missing response.
	CodeUpstreamFailed UpstreamCode = "upstream_failed"
)
