// Package ruleprobe counts the egress rule decisions the module makes, for
// its tests: a test that must show a path decides each request once (the
// call pipeline's model calls and tool calls, whose egress client sends
// what the pipeline's decision allowed) counts the decisions made while
// it runs.
//
// Invariants:
//
//   - It observes only, and runs no caller's code: a decision adds one to
//     a counter in memory, nothing else. It imports sync/atomic alone
//     (TestImportsOnlyAtomic), so the pure rule engine that calls it still
//     cannot reach the network or the file system.
//   - It is told the host decided and nothing else (no path, query or
//     header). While no count runs, a decision costs one atomic load here;
//     egress calls [Decided] from every decision (egress.Rules.Decide).
//   - One count at a time: [Count] panics while another runs, so that two
//     tests cannot read each other's decisions. A test that counts does
//     not run in parallel with one that counts.
package ruleprobe

import "sync/atomic"

// A count is the decisions of requests to host since it started.
type count struct {
	host string
	n    atomic.Int64
}

// running is the count running, or nil.
var running atomic.Pointer[count]

// Decided reports one rule decision of a request to host (canonical:
// lower case, no port) to the running count, if any.
func Decided(host string) {
	if c := running.Load(); c != nil && c.host == host {
		c.n.Add(1)
	}
}

// Count counts the rule decisions of requests to host from now until stop
// is called: n reports how many so far, from any goroutine. It panics if
// another count is running.
func Count(host string) (n func() int64, stop func()) {
	c := &count{host: host}
	if !running.CompareAndSwap(nil, c) {
		panic("ruleprobe: a count is running already")
	}
	return c.n.Load, func() { running.CompareAndSwap(c, nil) }
}
