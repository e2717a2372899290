// Package broker is the only thing capability-enabled sandbox code can
// reach: an MCP server (the official Go SDK,
// github.com/modelcontextprotocol/go-sdk) on a Unix socket that the plane
// serves inside the sandbox, with no network route of its own. Each
// broker serves one gateway.Channel, which the Runner opened with the
// server-owned token; the broker forwards tools/call over it and the
// gateway checks everything.
//
// Invariants:
//
//   - tools/list returns exactly the canonical descriptors (name,
//     description, input schema) of the tools the active profile allows,
//     and nothing about the provider: no operation, resource, host or
//     credential reference.
//   - A profile tool must be exactly a registration (capability, tool,
//     operation, resource); one that is not, such as a descriptor a
//     remote MCP server advertises with its own URL, is refused with
//     [CodeDescriptorUnregistered] and no broker is built. Default deny
//     holds whatever a descriptor advertises.
//   - tools/call forwards the capability and the arguments, nothing else:
//     _meta and every other field of the request are ignored, so sandbox
//     code can neither set nor widen the request context.
//   - A remote MCP tool's answer is its result's content, structured
//     content and error flag as the gateway's client received them,
//     screened by custody's edge; the remote server's own descriptors and
//     _meta are never served.
//   - A refusal reaches sandbox code as its code alone ("refused:
//     permission_missing"), never the gateway's message, which can name
//     leases, resources or registrations.
//   - A sandbox is bounded on the socket: lines of at most
//     [MaxLineBytes], at most [MaxConnections] connections and
//     [MaxCallsInFlight] requests handled at once (a request past it
//     waits unread), so at most [MaxHeldBytes] of its input held. When
//     Serve's context ends, or the peer goes away, handlers in flight
//     are cancelled, and Serve waits for them at most [CloseGrace].
//   - Refusals are bounded: at most [RefusalsPerSecond] a second (the
//     broker waits before the next call), and [MaxRefusals] per
//     channel, after which the channel closes and nothing more is
//     served or recorded ([CodeRefusalsExceeded], recorded once).
//   - Every tools/call reaches the log: one the SDK answers alone
//     (before initialize, as a notification, malformed) is recorded
//     as a refusal, [CodeCallMalformed].
//   - The same socket serves the model route: a connection whose first
//     byte starts an HTTP request (an upper-case method) rather than an
//     MCP message is served as HTTP/1.1, and each request goes through
//     the channel's pipeline as a model call (pipeline.Channel.Model),
//     which attaches the model key at the edge. The door's model relay
//     brings the agent's requests here byte for byte. A request goes to
//     the model registration whose dialect serves its path (Anthropic
//     Messages serves its count_tokens path too, so Claude Code's count
//     a turn spends none of the channel's refusal budget). A refusal is
//     an HTTP error whose body names the code alone. Bounds:
//     [MaxModelConnections], [MaxPending] connections waiting at most
//     [FirstByteTimeout] for their first byte, [MaxModelHeaderBytes],
//     [ModelIdleTimeout], and [MaxModelHeldBytes] of request bodies
//     held at once. The model registration is never an MCP tool.
//   - The broker holds no credential and dials nothing; a Runner gives
//     capability-free code no broker at all.
//
// For Docker, the socket lives in a host directory only the plane serves,
// bind-mounted into exactly one workload container, which runs with
// NetworkMode none. For a remote provider (a sandbox on another host) the
// channel would have to be carried over the provider's own process
// transport; no such carriage exists, so capabilities are unsupported on
// remote providers (see docs/gateway.md).
package broker
