// Package sqllog is what the SQL stores of eventlog (pglog on
// PostgreSQL, sqlitelog on SQLite) share: the statements both run as
// written ([SQL], built for one schema's tables by [New]), the reading of
// the head and of records with the mapping of their errors, the shred
// transaction's statements, the witness state's compare-and-swap, and the
// wake-up of followers when a commit lands. Each
// store keeps what is its own: connecting, its schema, Append (a batched
// unnest INSERT with NOTIFY on PostgreSQL, prepared INSERTs under one
// writer on SQLite), Shred's clean-up, and how it learns of other
// processes' commits.
//
// Invariants:
//
//   - Every statement is parameterised with $1, $2, ...: PostgreSQL's
//     form, which the SQLite driver binds by number too.
//   - Read and Head return records and heads exactly as stored; they
//     verify nothing (eventlog.Log does). Their failures are
//     *eventlog.StoreError with Op "read" or "head"; an empty session has
//     the zero Head.
//   - A Changes never loses a wake-up: Wait takes the channel before it
//     reads the head, so a commit between the two closes the channel it
//     waits on.
package sqllog
