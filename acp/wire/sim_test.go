package wire

import (
	"bytes"
	"errors"
	"fmt"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// sim drives the two pure state machines through one in-memory schedule.
// It plays the network (two frame queues, every frame encoded and decoded)
// and the process (reading stdin, writing stdout and stderr, exiting).
type sim struct {
	t  rapid.TB
	p  *provider
	r  *runnerState
	ep uint64

	connected bool
	toP, toR  [][]byte // encoded frames in flight

	outSrc, errSrc, inSrc []byte
	outMade, errMade, fed int
	consumed              []byte // what the process read from stdin
	delivered, errGot     []byte
	stdinBlocked          bool
	pipeClosed            bool
	truncated             bool
	staleGrant            []byte // an old window frame, to replay later
	hostile               bool   // inject overrunning stdin frames
	closedEarly           bool   // the process closed stdin before reading it all
	status                int32
}

func newSim(t rapid.TB, cfg providerConfig, out, errb, in []byte, hostile bool) *sim {
	s := &sim{t: t, r: &runnerState{}, outSrc: out, errSrc: errb, inSrc: in, hostile: hostile, status: 3}
	s.r.id = frame.ProcessID{1, 2, 3}
	s.p = newProvider(s.r.id, cfg)
	return s
}

func enc(t rapid.TB, f *frame.Frame) []byte {
	b, err := frame.Append(nil, f)
	if err != nil {
		t.Fatalf("encode %v: %v", f.Type, err)
	}
	return b
}

func dec(t rapid.TB, b []byte) frame.Frame {
	var f frame.Frame
	if err := frame.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return f
}

// connect performs the open/resume handshake.
func (s *sim) connect() {
	if s.connected || s.truncated || (s.r.finished() && s.r.doneSent) {
		return // a finished Runner has returned: it never reconnects
	}
	hello := dec(s.t, enc(s.t, ptr(s.r.hello())))
	cursor := hello.Offset
	if hello.Type == frame.TypeOpen {
		cursor = 0
	}
	ep, err := s.p.attach(cursor)
	if err != nil {
		if !errors.Is(err, CodeOutputTruncated) {
			s.t.Fatalf("attach(%d): %v", cursor, err)
		}
		if !s.p.kill {
			s.t.Fatalf("output_truncated without terminating the process")
		}
		s.truncated = true
		return
	}
	s.ep, s.connected = ep, true
}

func ptr(f frame.Frame) *frame.Frame { return &f }

func (s *sim) drop() {
	if !s.connected {
		return
	}
	s.toP, s.toR = nil, nil
	s.p.detach(s.ep)
	s.r.detach()
	s.connected = false
}

func (s *sim) feed(n int) {
	room := s.r.stdinRoom()
	n = min(n, room, len(s.inSrc)-s.fed)
	if n > 0 {
		s.r.addStdin(s.inSrc[s.fed : s.fed+n])
		s.fed += n
	}
	if s.fed == len(s.inSrc) && !s.r.srcEOF {
		s.r.closeStdin()
	}
}

func (s *sim) produce(n int) {
	if s.p.kill || s.p.outEOF {
		return
	}
	n = min(s.p.outRoom(n), len(s.outSrc)-s.outMade)
	s.p.appendOut(s.outSrc[s.outMade : s.outMade+n])
	s.outMade += n
	if s.outMade == len(s.outSrc) {
		s.p.outEOF = true
	}
}

func (s *sim) produceErr(n int) {
	if s.p.errEOF {
		return
	}
	n = min(n, len(s.errSrc)-s.errMade)
	s.p.appendErr(s.errSrc[s.errMade : s.errMade+n])
	s.errMade += n
	if s.errMade == len(s.errSrc) {
		s.p.errEOF = true
	}
}

func (s *sim) consume(n int) {
	if s.stdinBlocked || s.pipeClosed || n == 0 {
		return
	}
	buf := make([]byte, n)
	k, closePipe := s.p.stdinPending(buf)
	s.consumed = append(s.consumed, buf[:k]...)
	s.p.stdinWrote(k)
	if closePipe {
		s.pipeClosed = true
	}
}

// maybeExit reaps the process once it has done all its work (or was
// killed).
func (s *sim) maybeExit() {
	if s.p.reaped {
		return
	}
	if s.p.kill {
		// A killed process's pipes close.
		s.p.outEOF, s.p.errEOF = true, true
		s.status = 128 + 9
		s.p.exited(s.status)
	}
	if s.p.outEOF && s.p.errEOF && s.pipeClosed {
		s.p.exited(s.status)
	}
}

func (s *sim) pumpRunner(n, chunk int) {
	for ; n > 0 && s.connected; n-- {
		f, ok := s.r.next(make([]byte, chunk))
		if !ok {
			return
		}
		s.toP = append(s.toP, enc(s.t, &f))
	}
}

func (s *sim) pumpProvider(n, chunk int) {
	for ; n > 0 && s.connected; n-- {
		f, ok := s.p.next(s.ep, make([]byte, chunk))
		if !ok {
			return
		}
		b := enc(s.t, &f)
		if f.Type == frame.TypeWindow && s.staleGrant == nil {
			s.staleGrant = b
		}
		s.toR = append(s.toR, b)
	}
}

func (s *sim) deliverToProvider(n int) {
	for ; n > 0 && len(s.toP) > 0; n-- {
		b := s.toP[0]
		s.toP = s.toP[1:]
		if b == nil {
			if s.p.stdinEnded {
				continue // stdin data after the end is a protocol error, not an overrun
			}
			b = s.overrunFrame()
		}
		f := dec(s.t, b)
		if err := s.p.handle(s.ep, &f); err != nil {
			s.t.Fatalf("provider.handle(%v at %d): %v", f.Type, f.Offset, err)
		}
	}
}

func (s *sim) deliverToRunner(n int) {
	for ; n > 0 && len(s.toR) > 0 && !s.truncated; n-- {
		f := dec(s.t, s.toR[0])
		s.toR = s.toR[1:]
		d, err := s.r.handle(&f)
		if errors.Is(err, CodeOutputTruncated) {
			s.truncated = true
			return
		}
		if err != nil {
			s.t.Fatalf("runner.handle(%v at %d): %v", f.Type, f.Offset, err)
		}
		s.delivered = append(s.delivered, d.stdout...)
		s.errGot = append(s.errGot, d.stderr...)
	}
}

// overrun injects a hostile stdin frame one byte past the provider's
// limit, filled with bytes that must never reach the process.
func (s *sim) overrun() {
	if !s.connected || !s.hostile {
		return
	}
	s.toP = append(s.toP, nil) // built on arrival, against the limit then
}

func (s *sim) overrunFrame() []byte {
	n := s.p.limit() - s.p.accepted + 1
	return enc(s.t, &frame.Frame{Type: frame.TypeStdin, Offset: s.p.accepted, Data: bytes.Repeat([]byte{0xEE}, int(n))})
}

// check asserts the invariants that hold after every step.
func (s *sim) check() {
	if s.r.sent > s.r.win.limit || s.r.total > s.r.win.limit {
		s.t.Fatalf("runner outstanding past its grant: sent %d total %d limit %d", s.r.sent, s.r.total, s.r.win.limit)
	}
	if s.p.accepted > s.p.limit() || int(s.p.accepted-s.p.written) > s.p.cfg.inputCredit {
		s.t.Fatalf("provider accepted %d past limit %d (written %d)", s.p.accepted, s.p.limit(), s.p.written)
	}
	if !bytes.HasPrefix(s.outSrc, s.delivered) {
		s.t.Fatalf("stdout delivered (%d bytes) is not a prefix of the process's stdout", len(s.delivered))
	}
	if !bytes.HasPrefix(s.inSrc, s.consumed) {
		s.t.Fatalf("stdin consumed (%d bytes) is not a prefix of the runner's stdin", len(s.consumed))
	}
	if !s.p.evicting && s.p.jr.head-s.p.acked > uint64(s.p.cfg.outputWindow) {
		s.t.Fatalf("provider holds %d unacknowledged bytes, window %d", s.p.jr.head-s.p.acked, s.p.cfg.outputWindow)
	}
}

// step performs one random action.
func (s *sim) step(t *rapid.T) {
	switch rapid.IntRange(0, 16).Draw(t, "action") {
	case 0:
		s.feed(rapid.IntRange(1, 5000).Draw(t, "feed"))
	case 1:
		s.produce(rapid.IntRange(1, 5000).Draw(t, "produce"))
	case 2:
		s.produceErr(rapid.IntRange(1, 300).Draw(t, "produceErr"))
	case 3:
		s.consume(rapid.IntRange(1, 5000).Draw(t, "consume"))
	case 4:
		s.stdinBlocked = !s.stdinBlocked
	case 5, 6:
		s.pumpRunner(rapid.IntRange(1, 8).Draw(t, "rframes"), rapid.IntRange(1, 3000).Draw(t, "rchunk"))
	case 7, 8:
		s.pumpProvider(rapid.IntRange(1, 8).Draw(t, "pframes"), rapid.IntRange(1, 3000).Draw(t, "pchunk"))
	case 9:
		s.deliverToProvider(rapid.IntRange(1, 8).Draw(t, "toP"))
	case 10:
		s.deliverToRunner(rapid.IntRange(1, 8).Draw(t, "toR"))
	case 11:
		// Grant loss: every window in flight is lost with the connection.
		s.drop()
	case 12:
		s.connect()
	case 13:
		// A stale or duplicated grant arrives late.
		if s.connected && s.r.attached && s.staleGrant != nil {
			s.toR = append(s.toR, s.staleGrant)
		}
	case 14:
		if !s.connected && rapid.Bool().Draw(t, "evict") {
			s.p.evicting = true // the detach outlived its grace
		}
	case 15:
		s.overrun()
	case 16:
		// The process closes its stdin early (the pipe breaks): the
		// Runner must not stall on credit that never comes.
		if rapid.IntRange(0, 3).Draw(t, "closeEarly") == 0 && !s.pipeClosed {
			s.p.stdinFailed()
			s.pipeClosed, s.closedEarly = true, true
		}
	}
	s.maybeExit()
	s.check()
}

// drain runs a fair schedule with no faults until the Runner has
// everything or was truncated. It fails if that takes too long: a
// deadlock.
func (s *sim) drain() {
	s.stdinBlocked = false
	for i := 0; ; i++ {
		if i > 100000 {
			s.t.Fatalf("no progress after %d rounds: deadlock (runner %+v) (provider acc %d wr %d outEOF %v head %d low %d acked %d evict %v kill %v reaped %v attached %v conn %+v)", i, s.r, s.p.accepted, s.p.written, s.p.outEOF, s.p.jr.head, s.p.jr.low(), s.p.acked, s.p.evicting, s.p.kill, s.p.reaped, s.p.attached, s.p.conn)
		}
		if s.truncated || (s.r.finished() && s.r.doneSent) {
			return
		}
		s.connect()
		s.feed(1 << 16)
		s.produce(1 << 16)
		s.produceErr(1 << 16)
		s.consume(1 << 16)
		s.maybeExit()
		s.pumpRunner(64, 4096)
		s.pumpProvider(64, 4096)
		s.deliverToProvider(64)
		s.deliverToRunner(64)
		s.check()
	}
}

// verify asserts the end-to-end properties after drain.
func (s *sim) verify() {
	if s.truncated {
		// output_truncated: the process was terminated and what was
		// delivered is still an exact prefix (check() held throughout).
		if !s.p.kill {
			s.t.Fatalf("truncated but the process was not terminated")
		}
		return
	}
	if !bytes.Equal(s.delivered, s.outSrc) {
		s.t.Fatalf("stdout delivered %d bytes, process wrote %d (exactly once, in order)", len(s.delivered), len(s.outSrc))
	}
	if !s.closedEarly && !bytes.Equal(s.consumed, s.inSrc) {
		s.t.Fatalf("process read %d stdin bytes, runner had %d (exactly once)", len(s.consumed), len(s.inSrc))
	}
	if s.r.status != s.status {
		s.t.Fatalf("exit status %d, want %d", s.r.status, s.status)
	}
	if !bytes.HasPrefix(s.errSrc, s.errGot) && len(s.errGot) > len(s.errSrc) {
		s.t.Fatalf("stderr delivered more than the process wrote")
	}
}

func (s *sim) String() string {
	return fmt.Sprintf("sim{out %d/%d delivered %d, in fed %d consumed %d}", s.outMade, len(s.outSrc), len(s.delivered), s.fed, len(s.consumed))
}
