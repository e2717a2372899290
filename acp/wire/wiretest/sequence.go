package wiretest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// seqOps is the length of each sequence, and seqRead how long one frame
// may take to arrive before the provider counts as hung.
const (
	seqOps  = 200
	seqRead = 10 * time.Second
)

// A seq drives one provider instance through a deterministic long run of
// stdin writes (fresh, resent, overlapping, filling the granted window),
// drains, acks and drops with resumes at chosen cursors, then ends its
// streams. Every stdout byte, replayed or new, is compared with the
// model: "cat" echoes stdin, so the byte at stdout offset o is stdin[o].
type seq struct {
	t     testing.TB
	dial  func() (net.Conn, error)
	seed  uint64
	rng   *rand.Rand
	ops   []string
	id    frame.ProcessID
	w     *conn
	stdin []byte // every stdin byte the suite produced, at its offset

	limit     uint64 // the highest absolute stdin limit granted
	delivered uint64 // stdout delivered in order on this connection
	acked     uint64 // the last ack sent
}

func sequence(seed uint64) func(testing.TB, func() (net.Conn, error)) {
	return func(t testing.TB, dial func() (net.Conn, error)) {
		s := &seq{t: t, dial: dial, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), id: newID(t)}
		s.run()
	}
}

func (s *seq) fatalf(format string, args ...any) {
	s.t.Helper()
	last := s.ops[max(0, len(s.ops)-8):]
	s.t.Fatalf("sequence %d, op %d (last ops %s): %s", s.seed, len(s.ops), strings.Join(last, ", "), fmt.Sprintf(format, args...))
}

func (s *seq) op(format string, args ...any) { s.ops = append(s.ops, fmt.Sprintf(format, args...)) }

func (s *seq) run() {
	s.op("open")
	s.w = open(s.t, s.dial, openFrame(s.id))
	a := s.w.attached()
	if a.Accepted != 0 || a.Head != 0 {
		s.fatalf("attached to a new process = %+v, want accepted 0 and head 0", a)
	}
	s.limit = a.Limit
	for range seqOps {
		switch n := s.rng.IntN(12); {
		case n < 4:
			s.write(1 + s.rng.Uint64N(700))
		case n < 5:
			s.resend()
		case n < 6:
			s.write(16 << 10) // as much of the window as one frame takes
		case n < 9:
			s.drain()
		case n < 10:
			s.ack()
		default:
			s.resume()
		}
	}
	s.end()
}

// write sends up to n fresh stdin bytes, never past the granted limit.
func (s *seq) write(n uint64) {
	off := uint64(len(s.stdin))
	room := s.limit - min(s.limit, off)
	if room == 0 {
		s.drain()
		return
	}
	n = min(n, room)
	data := make([]byte, n)
	for i := range data {
		data[i] = 'a' + byte(s.rng.IntN(26))
	}
	s.op("stdin %d+%d (limit %d)", off, n, s.limit)
	s.stdin = append(s.stdin, data...)
	s.w.send(frame.Frame{Type: frame.TypeStdin, Offset: off, Data: data})
}

// resend sends again a stretch of stdin already sent, as a Runner does
// after a drop: each byte must be applied once.
func (s *seq) resend() {
	if len(s.stdin) == 0 {
		return
	}
	off := s.rng.Uint64N(uint64(len(s.stdin)))
	end := off + 1 + s.rng.Uint64N(uint64(len(s.stdin))-off)
	s.op("resend stdin %d..%d", off, end)
	s.w.send(frame.Frame{Type: frame.TypeStdin, Offset: off, Data: bytes.Clone(s.stdin[off:end])})
}

func (s *seq) ack() {
	s.op("ack %d", s.delivered)
	s.w.send(frame.Frame{Type: frame.TypeAck, Offset: s.delivered})
	s.acked = s.delivered
}

// next reads one frame within seqRead.
func (s *seq) next() frame.Frame {
	s.t.Helper()
	s.w.c.SetReadDeadline(time.Now().Add(seqRead))
	var f frame.Frame
	if err := s.w.dec.Decode(&f); err != nil {
		s.fatalf("receive (delivered %d of %d stdout bytes): %v", s.delivered, len(s.stdin), err)
	}
	f.Data = bytes.Clone(f.Data)
	return f
}

// handle checks one frame against the model; it reports whether the
// frame was one the sequence expects mid-stream.
func (s *seq) handle(f frame.Frame) {
	s.t.Helper()
	switch f.Type {
	case frame.TypeStdout:
		end := f.Offset + uint64(len(f.Data))
		switch {
		case f.Offset > s.delivered:
			s.fatalf("stdout gap: a frame at %d, %d delivered", f.Offset, s.delivered)
		case end > uint64(len(s.stdin)):
			s.fatalf("stdout %d..%d, past the %d stdin bytes the process was sent", f.Offset, end, len(s.stdin))
		case !bytes.Equal(f.Data, s.stdin[f.Offset:end]):
			s.fatalf("stdout %d..%d is not the echo of stdin there (a replay numbered wrongly?)", f.Offset, end)
		}
		s.delivered = max(s.delivered, end)
	case frame.TypeWindow:
		if f.Accepted > uint64(len(s.stdin)) {
			s.fatalf("window accepted %d, past the %d stdin bytes sent", f.Accepted, len(s.stdin))
		}
		s.limit = max(s.limit, f.Limit)
	case frame.TypeStderr:
	case frame.TypeRefuse:
		s.fatalf("refused %s at %d (%q): every stdin frame was below the granted limit %d", f.Code, f.Offset, f.Message, s.limit)
	default:
		s.fatalf("unexpected %v frame mid-stream", f.Type)
	}
}

// drain reads until all stdin sent has come back on stdout.
func (s *seq) drain() {
	s.op("drain to %d", len(s.stdin))
	for s.delivered < uint64(len(s.stdin)) {
		s.handle(s.next())
	}
}

// resume drops the connection and resumes at a cursor between the last
// ack and what was delivered; the provider may replay from at or below
// the cursor (down to its low-water mark) but every byte must match.
func (s *seq) resume() {
	cursor := s.acked + s.rng.Uint64N(s.delivered-s.acked+1)
	s.op("drop, resume at %d (delivered %d)", cursor, s.delivered)
	s.w.c.Close()
	s.w = open(s.t, s.dial, frame.Frame{Type: frame.TypeResume, ID: s.id, Offset: cursor})
	a := s.w.attached()
	switch {
	case a.Accepted > uint64(len(s.stdin)) || a.Accepted < s.delivered:
		s.fatalf("attached after resume: accepted %d, want between the %d bytes echoed and the %d sent", a.Accepted, s.delivered, len(s.stdin))
	case a.Head < s.delivered || a.Head > a.Accepted:
		s.fatalf("attached after resume: head %d, want between %d delivered and %d accepted", a.Head, s.delivered, a.Accepted)
	case a.Low > cursor:
		s.fatalf("attached after resume at %d: low-water mark %d above the cursor, yet not refused", cursor, a.Low)
	}
	s.limit = max(s.limit, a.Limit)
	s.delivered = cursor
	if a.Accepted < uint64(len(s.stdin)) { // lost in the drop: resend from accepted
		s.w.send(frame.Frame{Type: frame.TypeStdin, Offset: a.Accepted, Data: bytes.Clone(s.stdin[a.Accepted:])})
	}
}

// end closes stdin and requires out_end at the final offset, err_end,
// then exit 0.
func (s *seq) end() {
	s.drain()
	s.op("stdin_end %d", len(s.stdin))
	s.w.send(frame.Frame{Type: frame.TypeStdinEnd, Offset: uint64(len(s.stdin))})
	var outEnd, errEnd bool
	for {
		f := s.next()
		switch f.Type {
		case frame.TypeOutEnd:
			if f.Offset != uint64(len(s.stdin)) || s.delivered != f.Offset {
				s.fatalf("out_end at %d after %d delivered, want %d", f.Offset, s.delivered, len(s.stdin))
			}
			outEnd = true
		case frame.TypeErrEnd:
			errEnd = true
		case frame.TypeExit:
			if !outEnd || !errEnd || f.Status != 0 {
				s.fatalf("exit %d (out_end %v, err_end %v), want 0 after both", f.Status, outEnd, errEnd)
			}
			s.w.send(frame.Frame{Type: frame.TypeDone})
			return
		default:
			s.handle(f)
		}
	}
}
