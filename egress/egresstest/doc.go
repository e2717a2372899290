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
package egresstest
