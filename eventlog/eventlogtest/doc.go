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
// own order. [TestWitnessStore] checks a WitnessStore's compare-and-swap.
//
// It cannot prove durability across a crash or that nothing reached the
// disk: those need the store's own tests (kill -9 of a real writer, a scan
// of the store's files), which the checkfu stores have.
package eventlogtest
