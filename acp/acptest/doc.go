// Package acptest provides helpers for testing code built on package acp,
// in the manner of net/http/httptest: a scripted in-process ACP agent
// ([Agent], run with [Start]) and a [Transcript] that records what a
// Runner sees of a turn in a form two runs can be compared in.
//
// Invariants:
//
//   - The Agent speaks ACP v1 over NDJSON with the same bounded framing as
//     package acp, so it never buffers more than its line bound.
//   - The Agent's own request ids start at 0, as real agents' do, so they
//     overlap the client's ids: a client that confuses the two id spaces
//     fails against it.
//   - The Agent refuses session/new and session/prompt before initialize,
//     like the reference TypeScript SDK, so a client that pipelines fails
//     against it.
//   - Nothing here is a real agent: evidence gathered against it is
//     checkfu.LabelMock.
package acptest
