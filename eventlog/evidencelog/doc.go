// Package evidencelog records custody's evidence (approval decisions,
// approval results and credentialed calls through the outbound edge) as
// events of an eventlog session, so that the decision and the result of
// an action-bound approval are separate, ordered, tamper-evident events of
// the session's audit log, and every edge call leaves a tool_call event.
//
// Invariants:
//
//   - [Sink.Record] returns nil only once the event is durable in the log;
//     custody treats an unrecorded decision as no decision.
//   - Every field of authz.Evidence maps to an envelope identifier; a
//     field that is not an identifier (a space, a newline, more than 256
//     bytes) is refused, never truncated or rewritten, so free text cannot
//     reach the durable envelope.
//   - The evidence label is carried over unchanged.
package evidencelog
