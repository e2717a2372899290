// Package gateway is the capability gateway: the one door between sandbox
// code and a credentialed provider, at plane authority. Sandbox code
// reaches it only through the broker (package gateway/broker) over a
// [Channel] the Runner opened; the gateway runs every call through its
// call pipeline (package custody/pipeline), which checks it in a fixed
// order and hands only authorized calls to custody's outbound edge.
// [NewPlane] is the one constructor of a plane (lease book, lease,
// approvals, edge, gateway).
//
// Invariants:
//
//   - The request context is established once, when the Runner opens a
//     channel with the application server's server-owned token
//     ([Authenticator]; [HMACTokens] is the reference). Every later hop
//     takes it from the channel: the gateway replaces whatever context the
//     Go context held, and nothing in a tool call can set or widen it.
//   - The order of checks is fixed, and written once, in the pipeline:
//     channel, permission assignment, exact static registration,
//     arguments, the Connection's egress rules, approval, lease, then the
//     edge, then the events. Nothing before the edge contacts a provider
//     or opens a credential, and no refusal spends lease budget: the lease
//     is spent only as the call leaves.
//   - A call over no open channel of the gateway is refused with
//     [pipeline.CodeChannelUnknown] and recorded as a denial that carries no
//     request context and no actor, since none is authenticated; a sink
//     that cannot take it does not lift the refusal.
//   - A missing permission, and a tool the profile does not list, are the
//     same refusal ([authz.CodePermissionMissing]) with the same text: it
//     does not say whether the capability, resource or credential exists.
//   - The decision and the result are separate evidence events, each
//     carrying the whole request context (through eventlog/evidencelog,
//     all nine fields reach the log) and the authority decision, never a
//     credential or the arguments; a decision that cannot be recorded is
//     no decision and the call does not run.
//   - The approval for an external effect is never named by the call: the
//     gateway finds the one bound to this actor, lease, action, effect and
//     session, and custody revalidates it immediately before the effect.
//   - A remote MCP tool (a registration of Protocol authz.MCP) passes the
//     same steps; at the edge step the gateway is the remote
//     server's client (package gateway/mcpremote) through custody's
//     [edge.RemoteTransport], which reaches only the registered endpoint.
//     The sandbox never dials an MCP server, and nothing a remote server
//     advertises (descriptors, URLs, _meta) is shown to it or dialled.
//   - Every zero value refuses.
package gateway
