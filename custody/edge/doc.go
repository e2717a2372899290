// Package edge is the outbound edge of custody: the one place where a
// credential leaves custody, attached to an allowed provider request.
// [Edge] makes credentialed tool calls; [TokenRuntime] is the reference
// runtime-backed custodian, refreshing OAuth tokens through
// [OAuthRefresher].
//
// Invariants:
//
//   - The edge keeps what needs the credential: [Edge.Send] takes a call
//     the gateway has already authorized (permission, registration,
//     arguments, lease, approval, in the gateway's order), checks that its
//     action is the registration for that credential and that the
//     Connection's rules allow it, opens and attaches the credential once
//     the lease is seen to hold, sends, and screens the answer. It spends
//     no lease budget and runs no approval.
//   - A remote MCP tool (a registration of Protocol authz.MCP) never goes
//     out through Send or Call: [Edge.Remote] gives the gateway's MCP
//     client a [RemoteTransport] bound to that one Connection, action,
//     lease and scope. It lets through only the registered endpoint, the
//     streamable-HTTP methods one call needs (POST and DELETE, never a
//     GET), [RemoteHeaders], and the handshake and the one authorized
//     tools/call; it rebuilds every request itself, sends
//     it like Send (rules, no redirects, public only, credential attached
//     here once the lease holds) and screens every answer the same way.
//   - Without a gateway, a credentialed tool call goes through [Edge.Call]
//     in one fixed order: the call is resolved against its authz registration
//     (arguments validated, exact match, no provider contact); the
//     outbound request is built from the registration alone and decided
//     by the Connection's egress rules; the lease is checked and spent;
//     for an external effect the action-bound approval is revalidated
//     immediately before the effect and used once. Only then is the
//     credential opened and attached, by the egress client's hook, to an
//     allowed https request. A denied call is never sent and never opens
//     the credential.
//   - Secret bytes are read only through custody/internal/reveal, inside
//     a callback, and never copied out of it except onto the wire of the
//     allowed request (and into the echo check's transient forms, which
//     are zeroed).
//   - A provider response that echoes the credential, in any form the
//     echo check knows (raw, case-folded, base64 variants, hex, UTF-16,
//     decimal byte lists, JSON-, percent- and HTML-escaped, and those
//     escapes nested and decoded repeatedly up to a fixed bound of
//     rounds), is withheld: the caller gets a
//     refusal with [CodeCredentialEchoed], never the body. Errors that
//     would carry the credential are withheld the same way.
//   - Every call records one edge_call Evidence; a call whose evidence
//     cannot be recorded returns no response.
//   - A TokenRuntime keeps refresh tokens sealed in a custody.Store,
//     refreshes an expired access token before returning it, and refreshes
//     at most once for concurrent Opens of one binding.
package edge
