package wire

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// providerConfig sizes one provider-side process.
type providerConfig struct {
	outputWindow int  // stdout journal capacity (output_window_bytes)
	inputCredit  int  // bytes of stdin the provider buffers beyond the pipe
	stderrCap    int  // bytes of stderr queued for sending; more are dropped
	lazyReplay   bool // on resume, replay the whole journal (tests the Runner's filter)
}

// errChunk is a piece of stderr waiting to be sent.
type errChunk struct {
	off  uint64
	data []byte
}

// provider is the pure provider-side state machine of one process: no
// I/O, no goroutines, no clock. The transport (server.go) feeds it frames
// and process events under one mutex and sends the frames it produces.
//
// Connection-scoped state is keyed by an epoch: every attach starts a new
// epoch, and frames from an older connection are ignored.
type provider struct {
	cfg providerConfig
	id  frame.ProcessID

	// stdin. Bytes [written, accepted) sit in inbuf waiting for the pipe.
	// The credit limit is written + inputCredit: it derives from the
	// offset actually written into the process pipe, nothing else.
	accepted, written uint64
	inbuf             byteQueue
	stdinEnded        bool // stdin_end applied at offset accepted
	stdinBroken       bool // the pipe refused a write; nothing more is written
	awaitingRewind    bool // an overrun was refused; later frames are dropped until the Runner rewinds

	// stdout.
	jr       journal
	acked    uint64 // the Runner's acknowledged delivery offset
	outEOF   bool   // the process closed stdout; jr.head is final
	evicting bool   // a detach outlived the grace: keep reading, evict unacknowledged bytes

	// stderr: best effort, bounded, never back-pressures stdout.
	errQ       []errChunk
	errQBytes  int
	errHead    uint64 // offset one past the last byte the process wrote
	errDropped uint64 // bytes dropped because the queue was full
	errEOF     bool

	// process lifecycle.
	reaped  bool
	status  int32
	kill    bool // the transport must terminate the process
	runDone bool // the Runner said done: the process record may be forgotten
	// killedByRunner: the Runner sent kill and will not collect the
	// process.
	killedByRunner bool

	// connection.
	epoch    uint64
	attached bool
	conn     connState
}

// connState is what the provider has sent on the current connection.
type connState struct {
	helloSent  bool   // the attached frame went out
	sendOut    uint64 // next stdout offset to send
	grantSent  uint64 // the last stdin limit advertised
	outEndSent bool
	errEndSent bool
	exitSent   bool
	// refusal is the pending input_buffer_full refusal, at most one: a
	// newer overrun replaces it (its offset is the later resume point),
	// so a Runner that floods overrunning frames and never reads cannot
	// grow the provider's memory.
	refusal    *frame.Frame
	fatal      *frame.Frame // a protocol_error refusal that ends the connection
	lastWasErr bool         // the last data frame was stderr (for alternation)
	sentOut    bool         // a stdout frame went out on this connection
}

// firstFrameMax caps the first stdout frame of a connection, so that the
// first byte after a resume does not wait for a full-size frame.
const firstFrameMax = 16 << 10

func newProvider(id frame.ProcessID, cfg providerConfig) *provider {
	return &provider{cfg: cfg, id: id, jr: journal{capacity: cfg.outputWindow}}
}

// limit returns the current absolute stdin credit limit.
func (p *provider) limit() uint64 { return p.written + uint64(p.cfg.inputCredit) }

// attach starts a new connection epoch for a Runner whose stdout cursor is
// cursor. A cursor below the journal's low-water mark is refused with
// output_truncated and the process is marked for termination; a cursor
// above the head is refused with output_cursor_ahead.
func (p *provider) attach(cursor uint64) (uint64, error) {
	if p.runDone {
		return 0, checkfu.Refuse(CodeProcessUnknown, "wire: process was already collected by its runner")
	}
	if cursor < p.jr.low() {
		p.kill = true
		return 0, checkfu.Refuse(CodeOutputTruncated, "wire: stdout cursor %d is below the journal's low-water mark %d (window %d bytes); the process was terminated", cursor, p.jr.low(), p.cfg.outputWindow)
	}
	if cursor > p.jr.head {
		return 0, checkfu.Refuse(CodeOutputCursorAhead, "wire: stdout cursor %d is above the journal head %d", cursor, p.jr.head)
	}
	p.epoch++
	p.attached = true
	p.evicting = false
	p.acked = max(p.acked, cursor)
	p.conn = connState{sendOut: cursor}
	if p.cfg.lazyReplay {
		p.conn.sendOut = p.jr.low()
	}
	return p.epoch, nil
}

// detach ends connection epoch e (a no-op for a stale epoch).
func (p *provider) detach(e uint64) {
	if e == p.epoch {
		p.attached = false
	}
}

// handle applies one frame received on connection epoch e. A frame from
// a stale epoch is ignored. It returns a protocol_error Refusal for a
// frame that breaks the protocol; the connection must then be closed.
func (p *provider) handle(e uint64, f *frame.Frame) error {
	if e != p.epoch || !p.attached {
		return nil
	}
	switch f.Type {
	case frame.TypeStdin:
		return p.handleStdin(f.Offset, f.Data)
	case frame.TypeStdinEnd:
		return p.handleStdinEnd(f.Offset)
	case frame.TypeAck:
		if f.Offset > p.jr.head {
			return protocolErr("ack of stdout offset %d above head %d", f.Offset, p.jr.head)
		}
		p.acked = max(p.acked, f.Offset)
	case frame.TypeDone:
		if !p.reaped {
			return protocolErr("done before the process exited")
		}
		p.runDone = true
	case frame.TypeKill:
		p.kill = true
		p.killedByRunner = true
	default:
		return protocolErr("unexpected %v frame from a runner", f.Type)
	}
	return nil
}

func (p *provider) handleStdin(off uint64, data []byte) error {
	end := off + uint64(len(data))
	if end <= p.accepted {
		return nil // a duplicate resent after a drop: already applied
	}
	if p.stdinEnded {
		return protocolErr("stdin data at offset %d past its final offset %d", off, p.accepted)
	}
	if off > p.accepted {
		if p.awaitingRewind {
			return nil // pipelined behind a refused frame; it will be resent
		}
		return protocolErr("stdin gap: frame at offset %d, accepted only %d", off, p.accepted)
	}
	w := window{limit: p.limit()}
	if !w.allows(off, end) {
		p.awaitingRewind = true
		// Offset is where the Runner must resume sending: everything
		// below accepted is applied, nothing of this frame is.
		if r := p.conn.refusal; r != nil && r.Offset == p.accepted {
			return nil // the pending refusal already says where to resume
		}
		p.conn.refusal = &frame.Frame{Type: frame.TypeRefuse, Code: CodeInputBufferFull, Offset: p.accepted,
			Message: fmt.Sprintf("stdin frame [%d, %d) would pass the granted credit limit %d; resend from %d after the next window", off, end, w.limit, p.accepted)}
		return nil
	}
	p.awaitingRewind = false
	if !p.stdinBroken {
		p.inbuf.push(data[p.accepted-off:])
	}
	p.accepted = end
	if p.stdinBroken { // nothing reaches a broken pipe; count it as written
		p.written = p.accepted
	}
	return nil
}

func (p *provider) handleStdinEnd(final uint64) error {
	switch {
	case p.stdinEnded && final == p.accepted:
		return nil // duplicate after a drop
	case final == p.accepted:
		p.stdinEnded = true
		return nil
	case final > p.accepted && p.awaitingRewind:
		return nil // behind a refused frame; it will be resent
	}
	return protocolErr("stdin_end at offset %d, accepted %d", final, p.accepted)
}

// next returns the next frame to send on epoch e, using buf for data, and
// false when there is nothing to send now.
func (p *provider) next(e uint64, buf []byte) (frame.Frame, bool) {
	if e != p.epoch || !p.attached {
		return frame.Frame{}, false
	}
	c := &p.conn
	if !c.helloSent {
		c.helloSent = true
		c.grantSent = p.limit()
		return frame.Frame{Type: frame.TypeAttached, ID: p.id, Accepted: p.accepted, Limit: c.grantSent,
			Window: uint64(p.cfg.outputWindow), Low: p.jr.low(), Head: p.jr.head, StdinEnded: p.stdinEnded}, true
	}
	if c.fatal != nil {
		f := *c.fatal
		c.fatal = nil
		return f, true
	}
	if c.refusal != nil {
		f := *c.refusal
		c.refusal = nil
		return f, true
	}
	if p.grantDue() {
		c.grantSent = p.limit()
		return frame.Frame{Type: frame.TypeWindow, Accepted: p.accepted, Limit: c.grantSent}, true
	}
	// stderr and stdout alternate when both are pending, so a stderr
	// flood never starves stdout.
	outPending := c.sendOut < p.jr.head
	if len(p.errQ) > 0 && !(outPending && c.lastWasErr) {
		c.lastWasErr = true
		ch := p.errQ[0]
		p.errQ = p.errQ[1:]
		p.errQBytes -= len(ch.data)
		return frame.Frame{Type: frame.TypeStderr, Offset: ch.off, Dropped: p.errDropped, Data: ch.data}, true
	}
	if c.sendOut < p.jr.low() && p.jr.low() <= p.acked {
		// A lazy replay overtaken by eviction: the Runner acknowledged
		// every byte skipped here, so skipping leaves no gap.
		c.sendOut = p.jr.low()
	}
	if c.sendOut < p.jr.low() {
		// Unacknowledged bytes were evicted (only possible after a detach
		// outlived its grace): never serve the gap.
		p.kill = true
		return frame.Frame{Type: frame.TypeRefuse, Code: CodeOutputTruncated, Offset: c.sendOut,
			Message: "stdout journal overtaken; the process was terminated"}, true
	}
	if c.sendOut < p.jr.head {
		c.lastWasErr = false
		if !c.sentOut && len(buf) > firstFrameMax {
			buf = buf[:firstFrameMax] // a small first frame: fast first byte after a resume
		}
		c.sentOut = true
		n := p.jr.readAt(buf, c.sendOut)
		f := frame.Frame{Type: frame.TypeStdout, Offset: c.sendOut, Data: buf[:n]}
		c.sendOut += uint64(n)
		return f, true
	}
	if p.outEOF && !c.outEndSent {
		c.outEndSent = true
		return frame.Frame{Type: frame.TypeOutEnd, Offset: p.jr.head}, true
	}
	if p.errEOF && !c.errEndSent {
		c.errEndSent = true
		return frame.Frame{Type: frame.TypeErrEnd, Offset: p.errHead, Dropped: p.errDropped}, true
	}
	if p.reaped && !c.exitSent {
		c.exitSent = true
		return frame.Frame{Type: frame.TypeExit, Status: p.status}, true
	}
	return frame.Frame{}, false
}

// grantDue reports whether a window frame should go out now: coalesced to
// a quarter of the credit, and always once the pipe has caught up with
// everything accepted (so a Runner waiting at its limit is never left
// without a grant: the proactive update).
func (p *provider) grantDue() bool {
	l := p.limit()
	if l <= p.conn.grantSent {
		return false
	}
	return l-p.conn.grantSent >= max(1, uint64(p.cfg.inputCredit)/4) || p.written == p.accepted
}

// stdinPending returns a copy of up to max buffered stdin bytes for the
// pipe writer, and whether the pipe should be closed (stdin ended and
// fully written).
func (p *provider) stdinPending(dst []byte) (n int, closePipe bool) {
	n = copy(dst, p.inbuf.bytes())
	return n, n == 0 && p.stdinEnded && p.written == p.accepted
}

// stdinWrote records that n bytes went into the process pipe.
func (p *provider) stdinWrote(n int) {
	p.inbuf.consume(n)
	p.written += uint64(n)
}

// stdinFailed records that the pipe is broken (the process closed its
// stdin or exited): buffered and future bytes are discarded as written so
// that the credit never leaks and the Runner never stalls.
func (p *provider) stdinFailed() {
	p.stdinBroken = true
	p.inbuf.reset()
	p.written = p.accepted
}

// outRoom returns how many stdout bytes the reader may append now without
// evicting a byte the Runner has not acknowledged. While evicting (a
// detach that outlived its grace) it returns max.
func (p *provider) outRoom(max int) int {
	if p.evicting {
		return max
	}
	unacked := p.jr.head - p.acked
	if unacked >= uint64(p.cfg.outputWindow) {
		return 0
	}
	return min(max, int(uint64(p.cfg.outputWindow)-unacked))
}

// appendOut records stdout bytes read from the process.
func (p *provider) appendOut(b []byte) { p.jr.append(b) }

// appendErr queues stderr bytes, dropping (and counting) what does not fit.
func (p *provider) appendErr(b []byte) {
	off := p.errHead
	p.errHead += uint64(len(b))
	if p.errQBytes+len(b) > p.cfg.stderrCap {
		p.errDropped += uint64(len(b))
		return
	}
	p.errQ = append(p.errQ, errChunk{off: off, data: append([]byte(nil), b...)})
	p.errQBytes += len(b)
}

// exited records the reaped process's status.
func (p *provider) exited(status int32) {
	p.reaped = true
	p.status = status
}
