// Package pglog is the eventlog.Store for PostgreSQL through pgx v5, for
// deployments where many runners on many hosts append to one log.
//
// Invariants:
//
//   - Records live in eventlog_events (session, seq, envelope, hash) and
//     eventlog_content (session, seq, data_key, sealed). Open(ctx, dsn)
//     creates them in the connection's current schema (set search_path in
//     the DSN to choose one) and owns its pool; OpenPool(ctx, pool, schema)
//     shares an embedder's pool, creates them in schema (validated, quoted
//     as an identifier, every statement schema-qualified) and leaves the
//     pool open on Close. (session, seq) is the primary key of both: two writers that
//     race for the same seq cannot both commit, and the loser gets
//     eventlog.CodeSeqConflict. Nothing is ever updated in place.
//   - Append commits one transaction per batch and returns after COMMIT,
//     which with the default synchronous_commit=on means the WAL is
//     flushed to disk.
//   - Records live in eventlog_shreds (session, seq, shred_seq) too: Shred
//     deletes the content row, adds the row naming the shred event, and
//     appends that event, in one transaction. The checkpoint witness's
//     state, when this store backs one, is eventlog_witness (one row per
//     origin).
//   - Shred does not remove every copy of the row: the dead tuple stays in
//     the table until VACUUM, and the wrapped data key and ciphertext stay
//     in the WAL segment written at append time after VACUUM (FULL) and
//     CHECKPOINT, until that segment is retired and, with wal_recycle on,
//     overwritten; in WAL archives, replicas and backups for their own
//     retention. docs/eventlog.md says what to do about it.
//   - Every commit sends NOTIFY checkfu_eventlog; a handle's followers
//     wake on it through one LISTEN connection per handle (opened on the
//     first Wait), and re-read the head every PollInterval as a fallback
//     while that connection is down.
package pglog
