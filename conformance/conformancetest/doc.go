// Package conformancetest provides rapid generators for the values of
// package conformance, for integrators writing property tests over grades
// and receipts (in the spirit of net/http/httptest and testing/fstest).
//
// Every generator yields only values the conformance package accepts:
// records pass Record.Check, signers hold real Ed25519 keys (derived from
// rapid-chosen seeds, so failures shrink and replay). Provider and
// revision names are drawn partly from a small pool of look-alikes
// ("checkfu:daytona-provider" and "checkfu:daytona-worker-provider", "2"
// and "20") so that exact-pair properties meet near misses often.
//
// What it cannot prove: generated keys are honest keys. Hostile keys
// (small-order, mixed-order, non-canonical) are fixed test vectors in the
// conformance tests, not something a generator can usefully sample.
package conformancetest
