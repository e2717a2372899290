// Package wiretest is a conformance suite for openProcess wire providers,
// in the manner of golang.org/x/net/nettest: any provider (ours, or a
// partner's in another language) that serves a process echoing stdin to
// stdout ("cat") can be checked frame by frame with [TestProvider].
//
// What it proves: the handshake (attached first), the absolute credit
// window (an overrunning frame refused whole with input_buffer_full and
// retryable), stdin applied exactly once under resends, the reservation
// (a second open refused), resume at a cursor (replay from at or below
// the cursor, never above), a cursor above the head refused, and the end
// of streams (out_end with the final offset, err_end, exit with status 0).
//
// Each Sequence subtest drives ONE provider instance through a
// deterministic run of 200 operations (fresh, resent and overlapping stdin,
// frames filling the granted window, drains, acks, drops with resumes
// at cursors between the last ack and what was delivered), then ends its
// streams; every stdout byte, replayed or new, must be the echo of the
// stdin at its offset, no stdin frame below the granted limit may be
// refused, and attached after each resume must agree with what was sent
// and delivered.
//
// Proved to catch (the suite's own tests run it against the Server
// behind a frame-rewriting proxy that plants each bug, and fail if it
// ever accepts one): a provider that replays its journal from 0 after a
// resume but numbers the frames from the cursor; one that grants credit
// it does not have (limits raised past its buffer, so it refuses stdin
// it granted); one that clamps a cursor above the head instead of
// refusing it.
//
// What it cannot prove: behaviour under real drops and timing (the
// package's own property and cut tests cover that), the journal's
// eviction after a detach grace, or anything about the process's
// isolation.
package wiretest
