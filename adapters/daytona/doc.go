// Package daytona runs sandboxed processes on Daytona (daytona.io), with
// the standard library's HTTP client and a minimal RFC 6455 reader: the
// sandbox API (POST, GET and DELETE /sandbox, the toolbox proxy URL) and
// the toolbox's sessions (create, exec, input, the command log over a
// WebSocket, delete).
//
// Daytona's /process/execute merges stdout and stderr and takes no
// stdin, so the adapter never uses it. Each process runs in its own
// session instead, whose log keeps the streams apart with the daemon's
// 01 01 01 / 02 02 02 prefixes and whose input endpoint takes stdin.
//
// Invariants:
//
//   - The API key is a plane credential the adapter never holds: every
//     request, the WebSocket upgrade included, leaves through the
//     Runner's [Edge] with an opaque handle. Error bodies are never
//     quoted.
//   - [MapPolicy] is exact or refuses, typed ([CodeAllowlistInexpressible]):
//     none is networkBlockAll; unrestricted (no deny list for private
//     ranges) and every allowlist (Daytona's lists carry no port, so
//     any entry would widen host:port to every port) are refused before
//     any request. The capability declares the none mode only.
//   - The grade is advisory_filter ([AdvisoryReason]); [Identity] and
//     [WorkerIdentity] are separate exact pairs.
//   - At most one live process per sandbox (acp/wire's
//     process_already_open); the reservation ends before Wait returns.
//   - What a session does to the streams is declared, never hidden
//     ([StdioCaveats], in every [Evidence]): output is relabelled line
//     by line (a last line gains a newline, NUL bytes are lost, the
//     prefix bytes inside a line split it); stdin takes UTF-8 lines,
//     and Close is refused with [CodeStdinInexpressible], because a
//     session's input never ends. A partial last line is refused
//     rather than sent with the newline the daemon would add.
//   - Kill deletes the session, which terminates its whole process
//     group; the status is then 137, the signal the adapter asked for,
//     since Daytona records none for a command its session ended.
//   - Every answer is decoded with internal/strictjson; WebSocket frames
//     are bounded to 4 MiB and a masked server frame is refused.
//
// The tests run against an in-process fake validated against OpenAPI
// documents written from Daytona's published definitions
// (testdata/README.md), with real local processes behind it; their
// evidence is labelled mock.
package daytona
