// Package telemetry holds what checkfu's packages share to emit
// OpenTelemetry traces through the OpenTelemetry Go API: the tracer a
// package takes from an embedder's trace.TracerProvider, and the
// attributes a span may carry.
//
// Invariants:
//
//   - A nil provider turns tracing off: [Start] then starts no span and
//     allocates nothing, so an embedder that sets no provider pays a
//     nil check per hop.
//   - Attributes are identifiers, codes and digests only: the request
//     context's fields, a capability, an action or profile digest, a
//     refusal code, an HTTP status. No constructor here takes content
//     (arguments, answers, error text); [End] takes a stable code, never
//     an error.
//   - The package imports only the module's root package and the API
//     (never the SDK): it does no I/O.
package telemetry
