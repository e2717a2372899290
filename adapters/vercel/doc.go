// Package vercel runs sandboxed processes on Vercel Sandbox, with the
// standard library's HTTP client: POST /v3/sandboxes to create, POST
// /v2/sandboxes/sessions/{id}/cmd with wait=true for a process (an
// NDJSON stream of the command, its stdout and stderr lines, and its exit
// code), .../cmd/{cmdId}/kill and .../stop.
//
// Invariants:
//
//   - The token is a plane credential the adapter never holds: every
//     request leaves through the Runner's [Edge] with an opaque handle;
//     error bodies are never quoted.
//   - [MapPolicy] is exact or refuses, typed
//     ([CodeNetworkPolicyInexpressible]): none is deny-all; unrestricted
//     is the subnets 0.0.0.0/0 and 2000::/3 with every non-public range
//     denied (a denied subnet beats every allowance); an allowlist is
//     refused, since the domain list carries no port. Nothing is widened.
//   - The grade is advisory_filter ([AdvisoryReason]); [Identity] and
//     [WorkerIdentity] are separate exact pairs.
//   - At most one live process per sandbox (acp/wire's
//     process_already_open); the reservation ends before Wait returns.
//   - The gaps are declared, never faked ([StdioCaveats], in every
//     [Evidence]): ordinary commands take no stdin, so Write is refused
//     with [CodeStdinUnsupported] and the process reads end of input at
//     once (the interactive path is a PTY, which would merge the
//     streams); output travels as JSON strings, so bytes that are not
//     UTF-8 are not carried exactly.
//   - Every NDJSON line is decoded with internal/strictjson and bounded
//     to 1 MiB.
//
// The tests run against an in-process fake validated against an
// OpenAPI document written from Vercel's published SDK definitions
// (testdata/README.md), with real local processes behind it; their
// evidence is labelled mock.
package vercel
