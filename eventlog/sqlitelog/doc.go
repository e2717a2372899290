// Package sqlitelog is the embedded default eventlog.Store: one SQLite
// file through modernc.org/sqlite (pure Go, no cgo).
//
// Invariants:
//
//   - The database runs in WAL mode with synchronous=FULL, so a commit is
//     on disk before Append returns; a torn tail after a crash is rolled
//     back by SQLite and never touches committed records.
//   - One writer at a time: writes in a process are serialised by a mutex
//     and across processes by BEGIN IMMEDIATE with a busy timeout.
//   - Records live in eventlog_events (session, seq, envelope, hash),
//     eventlog_content (session, seq, data_key, sealed) and
//     eventlog_shreds (session, seq, shred_seq: which shred event deleted
//     a content row); a checkpoint witness kept here uses
//     eventlog_witness. (session, seq) is the primary key of both, so no record is
//     ever overwritten. Shred deletes the content row with secure_delete
//     on and truncates the WAL, so the wrapped data key and ciphertext do
//     not linger in free pages or old WAL frames.
//   - Followers in the same process wake on commit; followers in other
//     processes poll every PollInterval.
package sqlitelog
