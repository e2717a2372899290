package wiretest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// A MakeProvider starts a fresh provider instance that runs "cat" (stdin
// echoed to stdout) and returns a dial function for it and a stop
// function. Each subtest gets its own instance.
type MakeProvider = MakeProviderOf[*testing.T]

// A MakeProviderOf is a [MakeProvider] for the test type T (the suite's
// own tests run it under a recorder).
type MakeProviderOf[T testing.TB] func(t T) (dial func() (net.Conn, error), stop func())

// TestProvider runs the conformance suite against providers made by mp,
// one fresh provider per subtest; each Sequence subtest drives its one
// provider through a long run of operations and resumes.
func TestProvider[T testing.TB](t T, mp MakeProviderOf[T]) {
	for _, tc := range []struct {
		name string
		fn   func(t testing.TB, dial func() (net.Conn, error))
	}{
		{"AttachedFirst", testAttachedFirst},
		{"EchoExactlyOnce", testEchoExactlyOnce},
		{"OverrunRefusedWhole", testOverrunRefusedWhole},
		{"SecondOpenRefused", testSecondOpenRefused},
		{"ResumeAtCursor", testResumeAtCursor},
		{"CursorAheadRefused", testCursorAheadRefused},
		{"EndOfStreams", testEndOfStreams},
		{"Sequence1", sequence(1)},
		{"Sequence2", sequence(2)},
		{"Sequence3", sequence(3)},
	} {
		suitetest.Run(t, tc.name, func(t T) {
			dial, stop := mp(t)
			defer stop()
			tc.fn(t, dial)
		})
	}
}

// conn is a test-side raw wire connection.
type conn struct {
	t   testing.TB
	c   net.Conn
	dec *frame.Decoder
}

func open(t testing.TB, dial func() (net.Conn, error), hello frame.Frame) *conn {
	t.Helper()
	c, err := dial()
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(time.Minute)) // a hung provider fails, not hangs
	w := &conn{t: t, c: c, dec: frame.NewDecoder(bufio.NewReader(c))}
	w.send(hello)
	return w
}

func newID(t testing.TB) frame.ProcessID {
	var id frame.ProcessID
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	return id
}

func openFrame(id frame.ProcessID) frame.Frame {
	return frame.Frame{Type: frame.TypeOpen, ID: id, Version: 1}
}

func (w *conn) send(f frame.Frame) {
	w.t.Helper()
	b, err := frame.Append(nil, &f)
	if err != nil {
		w.t.Fatalf("encode %v: %v", f.Type, err)
	}
	if _, err := w.c.Write(b); err != nil {
		w.t.Fatalf("send %v: %v", f.Type, err)
	}
}

func (w *conn) recv() frame.Frame {
	w.t.Helper()
	var f frame.Frame
	if err := w.dec.Decode(&f); err != nil {
		w.t.Fatalf("receive: %v", err)
	}
	f.Data = bytes.Clone(f.Data)
	return f
}

// attached reads the first frame and requires it to be attached.
func (w *conn) attached() frame.Frame {
	w.t.Helper()
	f := w.recv()
	if f.Type != frame.TypeAttached {
		w.t.Fatalf("first frame is %v (%s %s), want attached", f.Type, f.Code, f.Message)
	}
	return f
}

// stdoutUntil collects stdout from offset from (filtering replays) until
// n bytes past from arrived, skipping other frames.
func (w *conn) stdoutUntil(from uint64, n int) []byte {
	w.t.Helper()
	var got []byte
	for len(got) < n {
		f := w.recv()
		switch f.Type {
		case frame.TypeStdout:
			end := f.Offset + uint64(len(f.Data))
			next := from + uint64(len(got))
			if f.Offset > next {
				w.t.Fatalf("stdout gap: frame at %d, expected %d", f.Offset, next)
			}
			if end > next {
				got = append(got, f.Data[next-f.Offset:]...)
			}
		case frame.TypeRefuse:
			w.t.Fatalf("refused: %s %s", f.Code, f.Message)
		}
	}
	return got
}

func testAttachedFirst(t testing.TB, dial func() (net.Conn, error)) {
	w := open(t, dial, openFrame(newID(t)))
	a := w.attached()
	if a.Accepted != 0 || a.Limit == 0 || a.Head != 0 || a.Low != 0 || a.Window == 0 {
		t.Fatalf("attached = %+v; want accepted 0, a non-zero limit and window, empty journal", a)
	}
}

func testEchoExactlyOnce(t testing.TB, dial func() (net.Conn, error)) {
	w := open(t, dial, openFrame(newID(t)))
	w.attached()
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello ")})
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello ")})     // duplicate
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 3, Data: []byte("lo world\n")}) // overlap
	if got := w.stdoutUntil(0, 12); string(got) != "hello world\n" {
		t.Fatalf("echo = %q, want %q (each stdin byte applied once)", got, "hello world\n")
	}
}

func testOverrunRefusedWhole(t testing.TB, dial func() (net.Conn, error)) {
	w := open(t, dial, openFrame(newID(t)))
	a := w.attached()
	if a.Limit >= frame.MaxPayload-64 {
		t.Skipf("limit %d too large to overrun in one frame", a.Limit)
	}
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: bytes.Repeat([]byte("x"), int(a.Limit)+1)})
	for {
		f := w.recv()
		if f.Type == frame.TypeStdout {
			t.Fatalf("an overrunning frame reached the process (%d bytes echoed)", len(f.Data))
		}
		if f.Type == frame.TypeRefuse {
			if f.Code != wire.CodeInputBufferFull || f.Offset != 0 {
				t.Fatalf("refusal %s at %d, want %s at 0", f.Code, f.Offset, wire.CodeInputBufferFull)
			}
			break
		}
	}
	// Retryable: the same offset within the limit is accepted.
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("ok\n")})
	if got := w.stdoutUntil(0, 3); string(got) != "ok\n" {
		t.Fatalf("after the refusal the echo is %q, want %q", got, "ok\n")
	}
}

func testSecondOpenRefused(t testing.TB, dial func() (net.Conn, error)) {
	w := open(t, dial, openFrame(newID(t)))
	w.attached()
	w2 := open(t, dial, openFrame(newID(t)))
	if f := w2.recv(); f.Type != frame.TypeRefuse || f.Code != wire.CodeProcessAlreadyOpen {
		t.Fatalf("second open got %v %s, want refuse %s", f.Type, f.Code, wire.CodeProcessAlreadyOpen)
	}
}

func testResumeAtCursor(t testing.TB, dial func() (net.Conn, error)) {
	id := newID(t)
	w := open(t, dial, openFrame(id))
	w.attached()
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("0123456789")})
	w.stdoutUntil(0, 10)
	w.c.Close()
	w2 := open(t, dial, frame.Frame{Type: frame.TypeResume, ID: id, Offset: 4})
	a := w2.attached()
	if a.Accepted != 10 || a.Head != 10 {
		t.Fatalf("attached after resume = %+v; want accepted 10, head 10", a)
	}
	w2.send(frame.Frame{Type: frame.TypeStdin, Offset: 10, Data: []byte("ab")})
	if got := w2.stdoutUntil(4, 8); string(got) != "456789ab" {
		t.Fatalf("stdout after resume at 4 = %q, want %q", got, "456789ab")
	}
}

func testCursorAheadRefused(t testing.TB, dial func() (net.Conn, error)) {
	id := newID(t)
	w := open(t, dial, openFrame(id))
	w.attached()
	w.c.Close()
	w2 := open(t, dial, frame.Frame{Type: frame.TypeResume, ID: id, Offset: 1})
	if f := w2.recv(); f.Type != frame.TypeRefuse || f.Code != wire.CodeOutputCursorAhead {
		t.Fatalf("resume above head got %v %s, want refuse %s", f.Type, f.Code, wire.CodeOutputCursorAhead)
	}
}

func testEndOfStreams(t testing.TB, dial func() (net.Conn, error)) {
	w := open(t, dial, openFrame(newID(t)))
	w.attached()
	w.send(frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("bye\n")})
	w.send(frame.Frame{Type: frame.TypeStdinEnd, Offset: 4})
	var out []byte
	var outEnd, errEnd, exit bool
	for !(outEnd && errEnd && exit) {
		f := w.recv()
		switch f.Type {
		case frame.TypeStdout:
			out = append(out, f.Data...)
		case frame.TypeOutEnd:
			if f.Offset != 4 {
				t.Fatalf("out_end at %d, want 4", f.Offset)
			}
			outEnd = true
		case frame.TypeErrEnd:
			errEnd = true
		case frame.TypeExit:
			if !outEnd || !errEnd {
				t.Fatalf("exit before out_end and err_end")
			}
			if f.Status != 0 {
				t.Fatalf("exit status %d, want 0", f.Status)
			}
			exit = true
		case frame.TypeRefuse:
			t.Fatalf("refused: %s %s", f.Code, f.Message)
		}
	}
	if string(out) != "bye\n" {
		t.Fatalf("stdout %q, want %q", out, "bye\n")
	}
	w.send(frame.Frame{Type: frame.TypeDone})
}
