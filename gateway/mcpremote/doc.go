// Package mcpremote is the gateway's client of remote MCP servers. For a
// call the gateway has authorized on a registration whose Protocol is
// authz.MCP, [Call] connects to the registered endpoint with the official
// Go SDK's streamable HTTP client (github.com/modelcontextprotocol/go-sdk),
// calls the one registered tool with the validated arguments, and hands
// back the tool's result.
//
// Invariants:
//
//   - Every byte goes through the http.RoundTripper the caller passes,
//     which for the gateway is custody's [edge.RemoteTransport]: it pins
//     the endpoint, the methods, the headers and the messages, attaches
//     the credential at the edge, and screens every answer for it. This
//     package holds no credential and dials nothing itself.
//   - The client advertises no capability (no roots, sampling or
//     elicitation), opens no standalone SSE stream and never retries or
//     resumes: one call is initialize, initialized, tools/call, and the
//     closing DELETE.
//   - A call ends within [MaxCallDuration], whatever the caller's context
//     allows: a server that answers every exchange but never the
//     tools/call cannot hold it (or the sandbox's call) open.
//   - The remote server's tools/list is never asked for, and nothing it
//     says about its tools (descriptions, annotations, _meta, URLs)
//     reaches the sandbox or decides anything: the registration's
//     descriptor is the tool's. The result passed on is its content,
//     structured content and error flag, without any _meta (the result's, a
//     content item's, or an embedded resource's); a content item no tool
//     result may hold (tool_use, tool_result) fails the call.
//   - A failed call is a [*checkfu.Refusal]: the transport's own, or
//     [CodeRemoteCallFailed], which carries no text of the remote server.
package mcpremote
