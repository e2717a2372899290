// Package door is the sandbox side of the one door: the small program
// (cmd/checkfu-door) that the Runner places in every sandbox that holds a
// capability, beside the broker socket the plane serves there. It holds
// no token, no key and no route of its own: everything it does is relay
// bytes to that socket, where the plane decides.
//
// It has two relays:
//
//   - RelayMCP serves MCP over stdio (newline-delimited JSON-RPC, the
//     transport ACP's session/new announces as a stdio server), relaying
//     every line to the broker socket and every answer back. An agent
//     that speaks MCP lists and calls the session's tools through it; it
//     never sees the socket.
//   - ServeModel listens on a loopback TCP port inside the sandbox and
//     relays each connection, byte for byte, over a connection of its own
//     to the same socket. The agent is pointed at it by its ordinary
//     base-URL setting and sends HTTP; the plane tells the two apart by
//     the first byte (an MCP message starts with "{", an HTTP request
//     with its method) and answers model requests through the model
//     route, which attaches the key at the outbound edge. The agent holds
//     only a placeholder key, which the door passes on unread.
//
// Run starts the model relay and then the agent as the door's child, in a
// process group of its own, with the door's own standard output, so ACP
// flows from the agent to the Runner without the door in the way; the
// door copies its input to the agent's. The agent ends with the door,
// and, when its input has ended, within InputGrace plus StopGrace, its
// process group with it.
//
// Invariants:
//
//   - The door reads no credential, writes no file and dials nothing but
//     the socket path it was given. It imports nothing of the plane.
//   - It is bounded: an MCP line is at most MaxLineBytes in either
//     direction (CodeRelayLineTooLong ends the relay, nothing of the line
//     forwarded), the model relay holds at most MaxModelConns connections
//     (one more is closed unanswered) and listens on a loopback address
//     only, and every dial gives up after DialTimeout.
//   - A relay that ends closes both of its connections.
package door
