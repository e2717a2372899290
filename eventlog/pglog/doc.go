// Package pglog is the eventlog.Store for PostgreSQL through pgx v5, for
// deployments where many runners on many hosts append to one log.
//
// Invariants:
//
//   - Records live in eventlog_events (session, seq, envelope, hash) and
//     eventlog_content (session, seq, data_key, sealed), created in the
//     connection's current schema (set search_path in the DSN to choose
//     one). (session, seq) is the primary key of both: two writers that
//     race for the same seq cannot both commit, and the loser gets
//     eventlog.CodeSeqConflict. Nothing is ever updated in place.
//   - Append commits one transaction per batch and returns after COMMIT,
//     which with the default synchronous_commit=on means the WAL is
//     flushed to disk.
//   - Shred deletes the content row. PostgreSQL keeps the dead row version
//     until VACUUM reclaims it; the data key in it is wrapped under the
//     workspace key, so run VACUUM on eventlog_content for prompt physical
//     removal.
//   - Every commit sends NOTIFY checkfu_eventlog; a handle's followers
//     wake on it through one LISTEN connection per handle (opened on the
//     first Wait), and re-read the head every PollInterval as a fallback
//     while that connection is down.
package pglog
