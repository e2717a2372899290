package wire

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// The codes of the wire's refusals, every one of the package. Each is a
// [*checkfu.Refusal] code, so errors.Is(err, wire.CodeOutputTruncated)
// works on any error a Runner or Server returns. A configuration out of
// range is refused with the shared [checkfu.CodeConfigInvalid].
const (
	// CodeProtocolError refuses a malformed or out-of-order frame. It
	// ends the connection; the process is unaffected.
	CodeProtocolError = frame.CodeProtocolError
	// CodeProcessAlreadyOpen refuses an open while the instance's process
	// has not been reaped.
	CodeProcessAlreadyOpen checkfu.Code = "process_already_open"
	// CodeInputBufferFull refuses, whole, a stdin frame that would pass
	// the granted credit limit. It is retryable: none of its bytes were
	// counted; send them again after the next window frame.
	CodeInputBufferFull checkfu.Code = "input_buffer_full"
	// CodeOutputTruncated refuses a resume whose stdout cursor is below
	// the journal's low-water mark. The provider terminates the process:
	// a gap is never served.
	CodeOutputTruncated checkfu.Code = "output_truncated"
	// CodeOutputCursorAhead refuses a resume whose stdout cursor is above the
	// journal's head (bytes the provider never produced).
	CodeOutputCursorAhead checkfu.Code = "output_cursor_ahead"
	// CodeProcessUnknown refuses a resume naming a process the provider
	// does not hold (never opened, or forgotten after done).
	CodeProcessUnknown checkfu.Code = "process_unknown"
	// CodePeerRefused refuses a peer that failed authentication: over
	// TLS, a key that is not pinned (or no certificate, or not TLS 1.3);
	// over a Unix socket, a peer running as another user.
	CodePeerRefused checkfu.Code = "peer_refused"
	// CodeProcessStartFailed refuses an open whose command could not be started.
	CodeProcessStartFailed checkfu.Code = "process_start_failed"
)

// protocolErr returns a protocol_error refusal for a frame that breaks
// the protocol.
func protocolErr(format string, args ...any) *checkfu.Refusal {
	return checkfu.Refuse(CodeProtocolError, "wire: "+format, args...)
}
