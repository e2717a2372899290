package wire

import (
	"bytes"
	"testing"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// frameStream encodes frames for fuzz seeds.
func frameStream(frames ...frame.Frame) []byte {
	var b []byte
	for i := range frames {
		b, _ = frame.Append(b, &frames[i])
	}
	return b
}

// FuzzProviderFrames feeds an arbitrary (hostile Runner's) frame stream to
// the provider state machine, interleaved with process progress: it must
// never panic, never accept stdin past its limit, never buffer more than
// its credit, and never let the journal hold more unacknowledged bytes
// than its window.
func FuzzProviderFrames(f *testing.F) {
	f.Add(frameStream(
		frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello")},
		frame.Frame{Type: frame.TypeStdin, Offset: 2, Data: []byte("llo world")},
		frame.Frame{Type: frame.TypeAck, Offset: 3},
		frame.Frame{Type: frame.TypeStdinEnd, Offset: 11},
	))
	f.Add(frameStream(frame.Frame{Type: frame.TypeStdin, Offset: 1 << 62, Data: []byte("x")}, frame.Frame{Type: frame.TypeKill}, frame.Frame{Type: frame.TypeDone}))
	f.Fuzz(func(t *testing.T, stream []byte) {
		p := newProvider(frame.ProcessID{1}, providerConfig{outputWindow: 64, inputCredit: 32, stderrCap: 16})
		ep, err := p.attach(0)
		if err != nil {
			t.Fatal(err)
		}
		d := frame.NewDecoder(bytes.NewReader(stream))
		buf := make([]byte, 50)
		for i := 0; ; i++ {
			var fr frame.Frame
			if d.Decode(&fr) != nil {
				return
			}
			if err := p.handle(ep, &fr); err != nil {
				return // a protocol error closes the connection
			}
			// Some process progress between frames.
			n, _ := p.stdinPending(buf[:i%7])
			p.stdinWrote(n)
			p.appendOut(make([]byte, p.outRoom(i%40)))
			p.appendErr(make([]byte, i%9))
			for {
				if _, ok := p.next(ep, buf); !ok {
					break
				}
			}
			if p.accepted > p.limit() || p.accepted-p.written > uint64(p.cfg.inputCredit) {
				t.Fatalf("accepted %d, written %d, limit %d", p.accepted, p.written, p.limit())
			}
			if p.jr.head-p.acked > uint64(p.cfg.outputWindow) && !p.evicting {
				t.Fatalf("journal holds %d unacknowledged bytes", p.jr.head-p.acked)
			}
		}
	})
}

// FuzzRunnerFrames feeds an arbitrary (hostile provider's) frame stream to
// the Runner state machine: it must never panic, never deliver stdout out
// of order or twice (delivered only grows, by exactly the bytes handed
// out), and never send stdin past the granted limit.
func FuzzRunnerFrames(f *testing.F) {
	id := frame.ProcessID{1}
	f.Add(frameStream(
		frame.Frame{Type: frame.TypeAttached, ID: id, Limit: 10, Window: 64},
		frame.Frame{Type: frame.TypeStdout, Offset: 0, Data: []byte("abc")},
		frame.Frame{Type: frame.TypeStdout, Offset: 1, Data: []byte("bcde")},
		frame.Frame{Type: frame.TypeWindow, Accepted: 3, Limit: 20},
		frame.Frame{Type: frame.TypeStderr, Offset: 0, Dropped: 1, Data: []byte("e")},
		frame.Frame{Type: frame.TypeOutEnd, Offset: 5},
		frame.Frame{Type: frame.TypeErrEnd, Offset: 1},
		frame.Frame{Type: frame.TypeExit, Status: 2},
	))
	f.Add(frameStream(frame.Frame{Type: frame.TypeAttached, ID: id, Accepted: 5, Limit: 1}, frame.Frame{Type: frame.TypeRefuse, Code: CodeInputBufferFull, Offset: 0}))
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := &runnerState{id: id}
		r.addStdin([]byte("0123456789"))
		d := frame.NewDecoder(bytes.NewReader(stream))
		buf := make([]byte, 4)
		var delivered uint64
		for {
			var fr frame.Frame
			if d.Decode(&fr) != nil {
				return
			}
			got, err := r.handle(&fr)
			if err != nil {
				return
			}
			delivered += uint64(len(got.stdout))
			if delivered != r.delivered {
				t.Fatalf("handed out %d stdout bytes, delivered offset %d", delivered, r.delivered)
			}
			for {
				out, ok := r.next(buf)
				if !ok {
					break
				}
				if out.Type == frame.TypeStdin && out.Offset+uint64(len(out.Data)) > r.win.limit {
					t.Fatalf("stdin [%d, %d) past limit %d", out.Offset, out.Offset+uint64(len(out.Data)), r.win.limit)
				}
			}
		}
	})
}
