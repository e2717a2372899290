// Package egresstest provides rapid generators for egress rules, hosts and
// requests, and a property suite, [TestDecider], that integrators run
// against anything that decides outbound requests: the package's own
// [egress.Rules], a wrapper around it, or a reimplementation in another
// component.
//
// The generators produce valid inputs in varied spellings (upper-case
// hosts, trailing dots, lower-case methods, IDN U-labels) and requests
// biased towards the rules they are checked against, so that allow and
// every refusal code are all exercised. Hostile inputs for the
// canonicalisers come from [HostInput].
//
// Like the standard library's testing/fstest, the suite checks what can be
// checked from the outside; its doc says what it cannot prove.
//
// Invariants:
//
//   - Generated values are valid: [Host] is canonical, [HeaderName] is never
//     a denied header, [Rule] and [Rules] are accepted by egress.NewRules,
//     and every entry of [DeniedHeaders] is denied
//     (TestGeneratorsProduceValidValues, TestDeniedHeadersAreDenied).
//   - Expected decisions come from [Reference], a slow, independent
//     implementation of the documented semantics, or from fixed
//     properties; never from the decider under test.
//   - The suite can fail: its own tests run it against the broken deciders
//     [TestDecider]'s doc lists and fail if it accepts one.
package egresstest
