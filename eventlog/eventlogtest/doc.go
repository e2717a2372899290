// Package eventlogtest is the conformance suite every eventlog.Store must
// pass, exported so that integrators can check their own stores, plus
// rapid generators of events.
//
// [TestStore] proves, for the store it is given: seqs from 1 with no gaps;
// the optimistic-concurrency refusal of a stale writer with nothing
// overwritten; reads in order from any seq; a follower that sees appends
// from another handle; concurrent appenders on separate handles; that
// verification names the exact seq of a changed, removed, reordered or
// inserted record and of changed content, and of any single-byte change;
// that content deleted outside Log.Shred, a forged or removed shred
// event and an undone shred are caught; that a truncated or rolled-back
// log is refused against a signed checkpoint and by a witness kept in the
// store under test; shredding and zero-data-retention at the record level;
// and, as rapid
// properties, that random interleavings of appends, stale appends and
// reads keep the log equal to a model, and that concurrent writers on
// separate handles with a live follower keep seq order and each writer's
// own order; and, in Sequence, that ONE handle at a time, driven through
// many single and batched appends, stale appends, shreds, whole-session
// reads, store reads of small pages from any seq, content reads,
// verification and reopen points (the handle closed and a new one opened
// on the same storage), answers every call as a model of the two
// sessions it writes does. [TestWitnessStore] checks a WitnessStore's
// compare-and-swap.
//
// The suites are generic over the test type T: a store's own tests pass
// a *testing.T and a [Harness]; the suite's tests run it under
// internal/suitetest's recorder with a [HarnessOf] that recorder.
//
// Proved to catch (the suite's own tests run it against each of these
// broken stores and fail if it ever accepts one): a store that commits
// lazily and drops the last append when its handle closes; one that
// keeps records in pages keyed by their decimal number and scans them as
// text, so reads past the tenth page return records out of order; one
// whose Shred marks the record shredded but keeps its data key and
// content.
//
// A harness whose Open returns one shared in-memory store (as
// eventlog.MemoryStore's does) cannot be reopened: Sequence then only
// swaps handles and never closes one mid-run.
//
// It cannot prove durability across a crash or that nothing reached the
// disk: those need the store's own tests (kill -9 of a real writer, a scan
// of the store's files), which the checkfu stores have.
package eventlogtest
