// Package wire carries one sandboxed process (the sandbox contract's
// openProcess) across a network connection: the provider side ([Server])
// runs the process, the runner side ([Runner]) drives it, and frames
// travel over any net.Conn (TCP or a Unix socket). docs/wire.md settles
// every frame.
//
// Invariants:
//
//   - At most one live process per Server: a second open is refused with
//     [CodeProcessAlreadyOpen]; the reservation is released only when the
//     process is reaped.
//
//   - stdin is governed by an explicit credit window. The provider grants
//     an ABSOLUTE offset limit (written-into-the-pipe offset plus the
//     input credit), refreshed proactively and coalesced. The Runner
//     never has bytes at or above the limit outstanding; a frame that
//     would pass it is refused whole with [CodeInputBufferFull]
//     (retryable) and none of its bytes are counted. When the process
//     stops reading stdin the provider stops granting. Every stdin frame
//     carries its input offset, so a write in flight during a drop is
//     applied exactly once.
//
//   - stdout is lossless within a bounded replay journal of
//     output_window_bytes, addressed by byte offset. A resume below the
//     journal's low-water mark is refused with [CodeOutputTruncated] and
//     the process is terminated: a gap is never served. A resume above
//     the head is refused with [CodeOutputCursorAhead]. The Runner's sequence
//     filter delivers every byte exactly once and in order even when the
//     provider replays its whole journal.
//
//   - While a Runner is attached, and for [Server.DetachGrace] after a
//     drop, the provider never evicts stdout the Runner has not
//     acknowledged: it stops reading the process instead, as a slow pipe
//     reader would. A detach that outlives the grace lets the provider
//     drain and evict, so that Runner is refused output_truncated.
//
//   - stderr is bounded and best effort, with its own queue and a drop
//     counter; it never back-pressures stdout.
//
//   - out_end and err_end carry the final byte offsets; the exit frame
//     carries the exit status; data past a final offset is a protocol
//     error.
//
//   - Every wait (credit, journal room, frames to send) also wakes on
//     disconnect, process exit, stdin end and cancellation.
//
//   - Both ends authenticate before the first frame: over TCP by TLS 1.3
//     with pinned Ed25519 keys ([Keys]), over a Unix socket by the peer's
//     uid (SO_PEERCRED; [Listen] creates the socket 0600). Only
//     InsecureNoAuth, on either side and without Keys, turns this off.
//     No TLS session is resumed; [Keys] never print the private key.
//
// Entry points: [Server] (Serve, ServeConn, Done, Close) on the provider
// side; [Runner] (Run) on the runner side; [NewKeys], [GenerateKey] and
// [Listen] for authentication; package wiretest holds a conformance suite
// for other provider implementations. The frame codec is internal
// (internal/frame). Zero values fail closed: a Server without a Command,
// a Runner without Dial, and either without Keys over TCP refuse to run
// ([checkfu.CodeConfigInvalid]).
//
// The protocol logic lives in two pure state machines (the provider's and
// the Runner's) with no I/O, so property tests drive them through random
// schedules of chunking, drops, reconnects, lazy replays and lost grants;
// server.go and client.go put goroutines and sockets around them.
package wire
