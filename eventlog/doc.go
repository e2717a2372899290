// Package eventlog is the audit surface of checkfu: every session is an
// append-only, ordered, tamper-evident log of typed events (tool calls,
// approval decisions and their results, denials, settlements, process
// lifecycle, admission decisions, skips), readable after the fact in order
// and followable while writers append.
//
// A [Log] writes events to a [Store]. Three stores pass the shared
// conformance suite in package eventlogtest: [MemoryStore] (tests and
// mock evidence), eventlog/sqlitelog (the embedded default) and
// eventlog/pglog (PostgreSQL, for many runners appending to one log).
// eventlog/evidencelog records custody's approval evidence in a session
// log; the CLI is "checkfu log append|read|verify|checkpoint|keygen".
//
// Invariants:
//
//   - Seqs run 1, 2, 3, ... per session with no gaps. Appending is
//     conditional on the expected last seq; a stale writer is refused with
//     [CodeSeqConflict] and nothing already stored is ever overwritten.
//   - An append returns only after the store reports the records durable
//     (committed and synced). Concurrent appends to one session through
//     one Log share a transaction (group commit).
//   - Each record's envelope is a canonical, length-prefixed binary record
//     (never JSON) holding the session, seq, the hash of the previous
//     record, and the event's envelope fields. The record hash is SHA-256
//     over a domain label and the envelope. The log writes envelope
//     version 3, which holds the whole request context (actor, role,
//     tenant, workspace, project, session_id, request_id, run_id,
//     release) and the channel the event's call came through; version 1,
//     which lacked role, tenant, workspace, project and session_id, and
//     version 2, which lacked the channel, are still read and verified
//     with those fields empty, so a store written before a change keeps
//     verifying. The version byte is hashed with the rest, so the domain
//     label stayed as it was and the versions never hash alike.
//   - An event with no actor and no other context field records a fact no
//     authenticated context stands behind (a call on a channel the
//     gateway never opened): the log never invents an actor for it. [Verify] names the first seq
//     that was changed, removed, reordered or inserted; a head recorded
//     elsewhere ([VerifyHead]), or a signed checkpoint ([Log.Checkpoint],
//     [VerifyCheckpoint]: a C2SP tlog-checkpoint in an Ed25519 signed
//     note), also catches truncation and wholesale rewrites, which a chain
//     cannot catch on its own. A [Witness] refuses a checkpoint that does
//     not extend the last one it accepted, with the envelopes between them
//     as proof, or that no key of the one it accepted signed. Only
//     verifiers built by [NewCheckpointVerifier] open a checkpoint.
//   - Envelope fields are identifiers and codes only. Execution content
//     (tool arguments, outputs, error strings) lives in Event.Content,
//     which never enters the envelope: it is sealed with
//     XChaCha20-Poly1305 under a fresh data key per event, the data key
//     wrapped under a key derived from the workspace's [Keys]. The
//     envelope commits to the keyed digest (HMAC-SHA256) of the content
//     and to the sealed bytes. [Log.Shred] deletes the data key and
//     ciphertext and records the deletion as a chained event of its own
//     ([KindShred]); the chain still verifies. Sealed content missing
//     without such an event was deleted behind the log's back, and
//     [Verify] names its seq. The chain is not keyed, so whoever can
//     write the store could append a shred event of their own; each
//     shred event therefore carries a tag (HMAC-SHA256 under the
//     workspace's digest key) over the record it shredded, which
//     [Log.Verify], [Log.Read], [Log.Content] and [Log.Checkpoint] of a
//     log with Keys check. The keyless [Verify] cannot.
//   - In a zero-data-retention log (Options.ZeroDataRetention) content
//     never reaches the store: the durable record holds the envelope and
//     the keyed digest only, never a bare hash of content.
//   - Event types hold no interface values and no secrets. JSON, fmt
//     (every verb, fmt.Errorf), slog (text and JSON handlers) and gob
//     output of an Event or Entry never contains content; fmt prints
//     Content as nil. The one path left open is an Event in an unexported
//     field of another struct, which fmt prints by reflection. encoding/xml
//     writes no content either, and fmt and slog print a [Record]'s
//     wrapped data key and sealed content as their lengths. Every event
//     carries an evidence label
//     (checkfu.Label); the zero label is mock.
//   - The zero values fail closed: the zero Kind is invalid and refused,
//     the zero Decision is "none" (never allow), the zero Options refuse
//     content.
package eventlog
