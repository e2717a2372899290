package wire

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// runnerState is the pure Runner-side state machine of one process: no
// I/O, no goroutines, no clock. The transport (client.go) feeds it frames
// and local stdin under one mutex and sends the frames it produces.
type runnerState struct {
	id     frame.ProcessID
	opened bool // an attached frame has been received at least once

	// stdin. Bytes [base, total) are retained in inbuf until the provider
	// reports them accepted; bytes [base, sent) have been sent on the
	// current connection. Invariant: sent <= total <= win.limit, so the
	// Runner never has more outstanding than granted.
	win          window
	stdinCap     uint64 // the most unacknowledged stdin held, whatever the grant; zero means DefaultStdinBuffer
	base         uint64
	inbuf        byteQueue
	total, sent  uint64
	srcEOF       bool // the local stdin source ended
	endSent      bool // stdin_end went out on the current connection
	providerEnds bool // the provider reported stdin_end applied

	// stdout: the sequence filter. delivered is the offset one past the
	// last byte handed to the caller.
	delivered  uint64
	ackSent    uint64
	outWindow  uint64
	outFinal   uint64
	outEnded   bool
	errNext    uint64
	errDropped uint64
	errEnded   bool

	exited      bool
	status      int32
	doneSent    bool
	killPending bool // the caller cancelled: ask the provider to terminate the process

	attached bool // a connection is live and its attached frame arrived
}

// hello returns the first frame of a connection: open for the first
// connection, resume with the stdout cursor afterwards.
func (r *runnerState) hello() frame.Frame {
	if !r.opened {
		return frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: r.id}
	}
	return frame.Frame{Type: frame.TypeResume, ID: r.id, Offset: r.delivered}
}

// detach forgets the current connection.
func (r *runnerState) detach() {
	r.attached = false
	r.endSent = false
}

// finished reports whether the Runner has everything: the exit status,
// all of stdout up to its final offset, and stderr's end.
func (r *runnerState) finished() bool {
	return r.exited && r.outEnded && r.delivered == r.outFinal && r.errEnded
}

// stdinRoom returns how many more bytes of local stdin may be taken now:
// what the grant allows, and never more than keeps the bytes not yet
// accepted by the provider within stdinCap, so a provider that grants
// without bound and never acknowledges cannot make the Runner hold all of
// its stdin.
func (r *runnerState) stdinRoom() int {
	if r.srcEOF || r.exited {
		return 0
	}
	capacity := r.stdinCap
	if capacity == 0 {
		capacity = DefaultStdinBuffer
	}
	held := r.total - r.base
	if held >= capacity {
		return 0
	}
	return int(min(r.win.room(r.total), capacity-held))
}

// addStdin retains local stdin bytes; len(b) must not exceed stdinRoom.
func (r *runnerState) addStdin(b []byte) {
	r.inbuf.push(b)
	r.total += uint64(len(b))
}

// closeStdin marks the end of local stdin.
func (r *runnerState) closeStdin() { r.srcEOF = true }

// A delivery is what one received frame yields for the caller.
type delivery struct {
	stdout, stderr []byte
}

// handle applies one frame from the provider. It returns the bytes to
// hand to the caller, or an error: a *checkfu.Refusal with the provider's
// code (fatal unless it is input_buffer_full, which is handled here), or a
// protocol_error.
func (r *runnerState) handle(f *frame.Frame) (delivery, error) {
	if !r.attached && f.Type != frame.TypeAttached && f.Type != frame.TypeRefuse {
		return delivery{}, protocolErr("%v frame before attached", f.Type)
	}
	switch f.Type {
	case frame.TypeAttached:
		if r.attached || f.ID != r.id {
			return delivery{}, protocolErr("unexpected attached frame")
		}
		if f.Accepted > r.total || f.Accepted < r.base {
			return delivery{}, protocolErr("attached reports stdin accepted %d outside [%d, %d]", f.Accepted, r.base, r.total)
		}
		r.opened, r.attached = true, true
		r.trim(f.Accepted)
		r.sent = f.Accepted
		r.win.grant(f.Limit)
		r.outWindow = f.Window
		r.providerEnds = f.StdinEnded
		r.endSent = f.StdinEnded
	case frame.TypeWindow:
		if f.Accepted > r.total {
			return delivery{}, protocolErr("window reports stdin accepted %d beyond the %d bytes written", f.Accepted, r.total)
		}
		r.trim(f.Accepted)
		r.sent = max(r.sent, f.Accepted) // applied bytes need no resend
		r.win.grant(f.Limit)
	case frame.TypeRefuse:
		if f.Code == CodeInputBufferFull && r.attached {
			// Rewind to where the provider wants the stream resumed: the
			// refused bytes were not counted.
			if to := max(f.Offset, r.base); to < r.sent {
				r.sent = to
				r.endSent = false
			}
			return delivery{}, nil
		}
		// The provider's code is what callers branch on; its message is
		// hostile text, quoted.
		return delivery{}, &checkfu.Refusal{Code: f.Code, Message: "wire: the provider says " + checkfu.Quote(f.Message)}
	case frame.TypeStdout:
		return r.filterStdout(f.Offset, f.Data)
	case frame.TypeStderr:
		end := f.Offset + uint64(len(f.Data))
		if r.errEnded {
			return delivery{}, protocolErr("stderr data past err_end")
		}
		if end <= r.errNext {
			return delivery{}, nil
		}
		if f.Offset > r.errNext {
			r.errNext = f.Offset // best effort: a dropped range is a gap here
		}
		d := delivery{stderr: f.Data[r.errNext-f.Offset:]}
		r.errNext = end
		r.errDropped = max(r.errDropped, f.Dropped)
		return d, nil
	case frame.TypeOutEnd:
		if r.outEnded && f.Offset != r.outFinal || f.Offset < r.delivered {
			return delivery{}, protocolErr("out_end at %d, delivered %d", f.Offset, r.delivered)
		}
		r.outEnded, r.outFinal = true, f.Offset
	case frame.TypeErrEnd:
		r.errEnded = true
		r.errDropped = max(r.errDropped, f.Dropped)
	case frame.TypeExit:
		r.exited, r.status = true, f.Status
	default:
		return delivery{}, protocolErr("unexpected %v frame from a provider", f.Type)
	}
	return delivery{}, nil
}

// filterStdout is the sequence filter: it makes stdout exactly-once even
// when the provider replays bytes the Runner already delivered. Data
// wholly below delivered is dropped, a partial overlap is trimmed, a gap
// or data past the final offset is a protocol error.
func (r *runnerState) filterStdout(off uint64, data []byte) (delivery, error) {
	end := off + uint64(len(data))
	if r.outEnded && end > r.outFinal {
		return delivery{}, protocolErr("stdout data up to %d past out_end %d", end, r.outFinal)
	}
	if off > r.delivered {
		return delivery{}, protocolErr("stdout gap: frame at %d, delivered %d", off, r.delivered)
	}
	if end <= r.delivered {
		return delivery{}, nil
	}
	data = data[r.delivered-off:]
	r.delivered = end
	return delivery{stdout: data}, nil
}

// trim drops retained stdin below offset a (accepted by the provider).
func (r *runnerState) trim(a uint64) {
	if a <= r.base {
		return
	}
	r.inbuf.consume(int(a - r.base))
	r.base = a
}

// next returns the next frame to send on the current connection, using
// buf for stdin data, and false when there is nothing to send now.
func (r *runnerState) next(buf []byte) (frame.Frame, bool) {
	if !r.attached {
		return frame.Frame{}, false
	}
	if r.killPending {
		r.killPending = false
		return frame.Frame{Type: frame.TypeKill}, true
	}
	if r.sent < r.total {
		// Never past the granted limit: total <= limit by construction,
		// and the window check makes it explicit.
		end := min(r.total, r.sent+uint64(len(buf)), r.win.limit)
		if end > r.sent {
			n := copy(buf, r.inbuf.bytes()[r.sent-r.base:end-r.base])
			f := frame.Frame{Type: frame.TypeStdin, Offset: r.sent, Data: buf[:n]}
			r.sent = end
			return f, true
		}
	}
	if r.srcEOF && r.sent == r.total && !r.endSent {
		r.endSent = true
		return frame.Frame{Type: frame.TypeStdinEnd, Offset: r.total}, true
	}
	if r.ackDue() {
		r.ackSent = r.delivered
		return frame.Frame{Type: frame.TypeAck, Offset: r.delivered}, true
	}
	if r.finished() && !r.doneSent {
		r.doneSent = true
		return frame.Frame{Type: frame.TypeDone}, true
	}
	return frame.Frame{}, false
}

// ackDue reports whether an ack should go out: coalesced to a quarter of
// the output window, so the provider's pacing never waits on an ack that
// is never sent.
func (r *runnerState) ackDue() bool {
	if r.delivered <= r.ackSent {
		return false
	}
	return r.delivered-r.ackSent >= max(1, r.outWindow/4)
}
