// Package adaptertest is the conformance suite for sandbox providers
// (package adapters), in the manner of golang.org/x/net/nettest.TestConn:
// one exported function, [TestProvider], runs every contract test
// against a provider as named subtests. Both providers of package
// process pass it, and so do both tiers of adapters/docker on a real
// engine; an adapter author runs it from their own test.
//
// It also holds rapid generators integrators can reuse: [Capability],
// [Enforcement], [Description], and [Matching] with [Break] for the
// evidence check; and the network probe ([RunProbe], [ProbeMain], and
// the program in adaptertest/probe) the suite runs inside an instance.
//
// Invariants:
//
//   - Sequences on one instance. Besides the focused subtests, Sequence
//     drives ONE instance through two dozen drawn operations (exit codes,
//     echoes, fresh tokens on both channels, a refused second open, a
//     kill, Env), so state an adapter keeps between processes is
//     exercised, not only a fresh instance per check.
//   - The suite can fail. Its own tests run it, through a recording
//     tester, against plausible broken providers and assert that the
//     named subtests reject each; TestProvider's doc lists them.
//   - Nothing hangs. Every blocking step is bounded by Harness.Timeout
//     and fails the subtest when it outlives it; every instance is
//     destroyed when its subtest ends.
//   - Gaps excuse exactly what they declare. A provider's declared
//     adapters.Gaps adapt or skip only the parts that need the missing
//     property, each logged with the gap's name; DeclaredGaps checks the
//     gaps are real where cheap; broken providers with gaps prove an
//     undeclared fault is still caught.
//   - Claims are tried, not read. A provider declaring network mode none
//     gets a probe that dials a live listener on the host's loopback and
//     lists the instance's interfaces; the probe's self-test first shows
//     it can use sockets at all.
//
// TestProvider's doc says what the suite proves and what it cannot.
package adaptertest
