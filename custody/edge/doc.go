// Package edge is the outbound edge of custody: the one place where a
// credential leaves custody, attached to an allowed provider request.
// [Edge] makes credentialed tool calls; [TokenRuntime] is the reference
// runtime-backed custodian, refreshing OAuth tokens through
// [OAuthRefresher].
//
// Invariants:
//
//   - The edge takes only calls the call pipeline (package
//     custody/pipeline) authorized: [Edge.Send] and [Edge.Remote] take an
//     [Authorized], which only the pipeline makes, after every check in
//     its order (channel, assignment, registration, arguments, rules,
//     approval, lease), and once the lease is spent. The zero value, the
//     only one code outside custody can write, or a value already sent, is
//     refused with [CodeNotAuthorized] before anything is opened. The edge
//     keeps what needs the credential: it opens and attaches the
//     credential once the lease is seen to hold, sends, and screens the
//     answer. It spends no lease budget and runs no approval.
//   - A remote MCP tool (a registration of Protocol authz.MCP) never goes
//     out through Send: [Edge.Remote] gives the gateway's MCP
//     client a [RemoteTransport] bound to that one Connection, action,
//     lease and scope. It lets through only the registered endpoint, the
//     streamable-HTTP methods one call needs (POST and DELETE, never a
//     GET), [RemoteHeaders], and the handshake and the one authorized
//     tools/call; it rebuilds every request itself, sends
//     it like Send (rules, no redirects, public only, credential attached
//     here once the lease holds) and screens every answer the same way.
//   - An agent's own model call (a registration of Protocol
//     authz.ModelAPI) goes out through [Edge.Stream]: the same decision,
//     no redirects, public addresses only, the key attached in the
//     egress hook in the dialect's header once the lease holds; the
//     answer's headers are screened before it is handed over, and its
//     body reaches the caller only through the [Stream]'s echo screen,
//     which carries from one piece of the body to the next the text's
//     tail and the text an agent assembles from the events' string
//     values, so a credential split across pieces or events is refused
//     in the piece that completes it; the screen also says how much of
//     what it passed to hold back: the events from where the text ends
//     with a prefix of a form of at least MinHeldPrefix bytes, until a
//     later piece settles it.
//     A stream is not held back for its evidence: the edge_call is
//     recorded once the reader is done, and a recording failure is
//     returned then.
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
