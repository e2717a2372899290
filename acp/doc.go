// Package acp frames and speaks the Agent Client Protocol (ACP v1) for a
// Runner: bounded newline-delimited JSON-RPC 2.0 in both directions
// ([Reader], [Writer], [ParseLine]), bounds on the session/new fields a
// Runner sends ([SessionLimits]), and a small typed client ([Client]:
// initialize, session/new, session/prompt, session/cancel, permission
// answers, session/update delivery) that runs over any io.Reader and
// io.Writer pair: a local process's pipes, `checkfu process attach`, or
// the acp/wire API.
//
// Invariants:
//
//   - Every line, read or written, is bounded by a configurable per-line
//     limit (default [DefaultMaxLineBytes], 16 MiB). A longer line is a
//     *checkfu.Refusal with code [CodeLineTooLong]: on output nothing of it
//     is written; on input it is discarded as it arrives and never
//     buffered beyond the bound. The [Reader] then resynchronises at the
//     next line; the [Client] instead ends, because the discarded line may
//     have been a response and a hole in the transcript must not pass
//     silently.
//   - Input that ends inside a line is [CodeLineTruncated]; the partial
//     line is never delivered.
//   - A line is one JSON-RPC 2.0 object or a non-empty JSON array of them
//     (a batch), in valid UTF-8; anything else is [CodeMessageInvalid], so
//     no invalid byte ever reaches Params or Result. Parsing is strict:
//     "jsonrpc" must be "2.0", ids are strings, integers or null, a
//     response carries exactly one of result and error.
//   - session/new is checked against [SessionLimits] (resume_blob,
//     mcpServers, builtinTools, continuity, runtimeConfig) before it is
//     encoded, so an over-limit request never reaches the process; each
//     limit has its own code. A zero limit means its default, never
//     "unlimited".
//   - The Client never pipelines session/new or session/prompt ahead of the
//     initialize answer, matches responses by id in any order, and never
//     takes an agent's request for a response even when their ids are
//     equal.
//   - session/update reaches Config.OnUpdate in arrival order on the read
//     goroutine with no queue in between: nothing is dropped or reordered
//     under a burst (a replay after a reconnect); a slow handler slows the
//     agent instead.
//   - Permission requests are denied unless a handler says otherwise, and
//     are answered "cancelled" after session/cancel, as ACP requires,
//     unless the handler committed its answer before the cancel
//     (CommitPermission): what a handler records as answered is what the
//     agent is told. A
//     request for a session that session/new did not create on this client
//     (any request before initialize is answered among them) is denied
//     without asking the handler. At
//     most 64 of them, holding at most Config.MaxPendingPermissionBytes
//     (default [DefaultMaxPendingPermissionBytes]), are with the handler
//     at once; the client denies the rest itself.
//   - Errors never quote the content of a session field; this package never
//     imports custody: the process path holds no plane credential.
package acp
