package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

func testProvider(t *testing.T, window, credit int) (*provider, uint64) {
	t.Helper()
	p := newProvider(frame.ProcessID{9}, providerConfig{outputWindow: window, inputCredit: credit, stderrCap: 64})
	ep, err := p.attach(0)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := p.next(ep, nil); !ok || f.Type != frame.TypeAttached || f.Limit != uint64(credit) {
		t.Fatalf("first frame = %+v, want attached with limit %d", f, credit)
	}
	return p, ep
}

// drainFrames returns every frame the provider has to send now.
func drainFrames(p *provider, ep uint64) []frame.Frame {
	var out []frame.Frame
	for {
		f, ok := p.next(ep, make([]byte, 1<<16))
		if !ok {
			return out
		}
		out = append(out, f)
	}
}

func TestStdinOverrunRefusedWhole(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: make([]byte, 60)}); err != nil {
		t.Fatal(err)
	}
	// 60 + 41 = 101 > 100: refused whole, nothing counted.
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 60, Data: make([]byte, 41)}); err != nil {
		t.Fatal(err)
	}
	if p.accepted != 60 || p.inbuf.len() != 60 {
		t.Fatalf("after an overrun: accepted %d, buffered %d; want 60, 60", p.accepted, p.inbuf.len())
	}
	frames := drainFrames(p, ep)
	if len(frames) == 0 || frames[0].Type != frame.TypeRefuse || frames[0].Code != CodeInputBufferFull || frames[0].Offset != 60 {
		t.Fatalf("frames after overrun = %+v, want refuse input_buffer_full at 60", frames)
	}
	// A pipelined frame behind the refused one is dropped, not an error.
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 101, Data: []byte("x")}); err != nil || p.accepted != 60 {
		t.Fatalf("pipelined frame: %v, accepted %d", err, p.accepted)
	}
	// Retried within the limit it is accepted.
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 60, Data: make([]byte, 40)}); err != nil || p.accepted != 100 {
		t.Fatalf("retry: %v, accepted %d; want nil, 100", err, p.accepted)
	}
	// The Runner side: the refusal rewinds and is not an error.
	r := &runnerState{attached: true, sent: 101, total: 101, inbuf: byteQueue{buf: make([]byte, 41)}, base: 60, win: window{limit: 200}}
	if _, err := r.handle(&frames[0]); err != nil || r.sent != 60 {
		t.Fatalf("runner on input_buffer_full: %v, sent %d; want nil, 60", err, r.sent)
	}
}

// The window derives from the offset written into the pipe: nothing is
// granted while the process does not read, and a grant goes out
// proactively once it does.
func TestGrantFollowsPipe(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: make([]byte, 100)})
	if fs := drainFrames(p, ep); len(fs) != 0 {
		t.Fatalf("granted %+v while the pipe is blocked", fs)
	}
	buf := make([]byte, 10)
	n, _ := p.stdinPending(buf)
	p.stdinWrote(n) // 10 bytes: below the coalescing threshold of 25
	if fs := drainFrames(p, ep); len(fs) != 0 {
		t.Fatalf("uncoalesced grant %+v", fs)
	}
	buf = make([]byte, 100)
	n, _ = p.stdinPending(buf)
	p.stdinWrote(n) // pipe caught up: a grant goes out
	fs := drainFrames(p, ep)
	if len(fs) != 1 || fs[0].Type != frame.TypeWindow || fs[0].Limit != 200 || fs[0].Accepted != 100 {
		t.Fatalf("after the pipe caught up: %+v, want window limit 200", fs)
	}
}

// A write in flight during a drop is applied exactly once: the resend
// carries the same offset.
func TestStdinResendAppliedOnce(t *testing.T) {
	p, ep := testProvider(t, 4096, 1000)
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello ")})
	p.detach(ep)
	ep, _ = p.attach(0)
	drainFrames(p, ep)
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello world")})
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 6, Data: []byte("world")})
	// A stale resend wholly below accepted changes nothing.
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("hello ")})
	if string(p.inbuf.bytes()) != "hello world" || p.accepted != 11 {
		t.Fatalf("stdin buffered %q, accepted %d; want %q, 11", p.inbuf.bytes(), p.accepted, "hello world")
	}
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 20, Data: []byte("x")}); !errors.Is(err, CodeProtocolError) {
		t.Fatalf("gap: %v, want protocol_error", err)
	}
}

func TestResumeBelowLowWaterIsTruncated(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.appendOut(make([]byte, 1000))
	p.detach(ep)
	p.evicting = true
	p.appendOut(make([]byte, 5000)) // low is now 6000-4096 = 1904
	_, err := p.attach(500)
	if !errors.Is(err, CodeOutputTruncated) || !p.kill {
		t.Fatalf("attach(500) below low %d: %v, kill=%v; want output_truncated and kill", p.jr.low(), err, p.kill)
	}
	if _, err := p.attach(1904); err != nil {
		t.Fatalf("attach at low: %v", err)
	}
}

func TestResumeAboveHeadRefused(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.appendOut([]byte("abc"))
	p.detach(ep)
	if _, err := p.attach(4); !errors.Is(err, CodeOutputCursorAhead) {
		t.Fatalf("attach above head: %v, want %s", err, CodeOutputCursorAhead)
	}
}

// While attached the provider never evicts unacknowledged stdout: it
// stops reading instead.
func TestPacingKeepsUnackedBytes(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.appendOut(make([]byte, p.outRoom(1<<20)))
	if room := p.outRoom(1 << 20); room != 0 || p.jr.low() != 0 {
		t.Fatalf("room %d, low %d after filling the window unacknowledged", room, p.jr.low())
	}
	p.handle(ep, &frame.Frame{Type: frame.TypeAck, Offset: 1000})
	if room := p.outRoom(1 << 20); room != 1000 {
		t.Fatalf("room after ack of 1000 = %d", room)
	}
}

func TestLazyReplayDeliveredOnce(t *testing.T) {
	r := &runnerState{attached: true}
	var got []byte
	for _, f := range []frame.Frame{
		{Type: frame.TypeStdout, Offset: 0, Data: []byte("hello ")},
		{Type: frame.TypeStdout, Offset: 0, Data: []byte("hel")},         // wholly below
		{Type: frame.TypeStdout, Offset: 3, Data: []byte("lo world")},    // partial overlap
		{Type: frame.TypeStdout, Offset: 0, Data: []byte("hello world")}, // whole replay
	} {
		d, err := r.handle(&f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.stdout...)
	}
	if string(got) != "hello world" {
		t.Fatalf("delivered %q, want %q", got, "hello world")
	}
}

func TestDataPastFinalIsProtocolError(t *testing.T) {
	r := &runnerState{attached: true}
	r.handle(&frame.Frame{Type: frame.TypeStdout, Offset: 0, Data: []byte("ab")})
	// A gap before out_end: the provider never serves one, and the Runner
	// never delivers one.
	if d, err := r.handle(&frame.Frame{Type: frame.TypeStdout, Offset: 3, Data: []byte("d")}); !errors.Is(err, CodeProtocolError) || len(d.stdout) != 0 || r.delivered != 2 {
		t.Fatalf("stdout gap: %q, %v, delivered %d; want protocol_error, nothing delivered", d.stdout, err, r.delivered)
	}
	if _, err := r.handle(&frame.Frame{Type: frame.TypeOutEnd, Offset: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.handle(&frame.Frame{Type: frame.TypeStdout, Offset: 2, Data: []byte("c")}); !errors.Is(err, CodeProtocolError) {
		t.Fatalf("stdout past out_end: %v, want protocol_error", err)
	}
	if _, err := r.handle(&frame.Frame{Type: frame.TypeStdout, Offset: 5, Data: nil}); !errors.Is(err, CodeProtocolError) {
		t.Fatalf("stdout past out_end after a gap: %v, want protocol_error", err)
	}
	p, ep := testProvider(t, 4096, 100)
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("x")})
	p.handle(ep, &frame.Frame{Type: frame.TypeStdinEnd, Offset: 1})
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 1, Data: []byte("y")}); !errors.Is(err, CodeProtocolError) {
		t.Fatalf("stdin past stdin_end: %v, want protocol_error", err)
	}
}

// stderr is bounded with a drop counter and never holds up stdout.
func TestStderrBoundedWithDropCounter(t *testing.T) {
	p, ep := testProvider(t, 4096, 100) // stderrCap 64
	p.appendErr(bytes.Repeat([]byte("e"), 60))
	p.appendErr(bytes.Repeat([]byte("f"), 10)) // does not fit: dropped
	p.appendOut([]byte("out"))
	p.appendErr([]byte("g"))
	var errs, outs int
	var dropped uint64
	for _, f := range drainFrames(p, ep) {
		switch f.Type {
		case frame.TypeStderr:
			errs += len(f.Data)
			dropped = f.Dropped
		case frame.TypeStdout:
			outs += len(f.Data)
		}
	}
	if errs != 61 || dropped != 10 || outs != 3 {
		t.Fatalf("stderr %d bytes dropped %d, stdout %d; want 61, 10, 3", errs, dropped, outs)
	}
}

// A frame from a superseded connection is ignored.
func TestStaleEpochIgnored(t *testing.T) {
	p, old := testProvider(t, 4096, 100)
	p.detach(old)
	cur, _ := p.attach(0)
	p.handle(old, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: []byte("stale")})
	if p.accepted != 0 || cur == old {
		t.Fatalf("stale frame applied: accepted %d", p.accepted)
	}
}

// The journal agrees with a slow reference: the last capacity bytes.
func TestJournalMatchesReference(t *testing.T) {
	for _, capacity := range []int{1, 7, 100, 5000} {
		j := journal{capacity: capacity}
		var all []byte
		for i := 0; i < 300; i++ {
			chunk := bytes.Repeat([]byte{byte(i)}, (i*37)%(2*capacity+3))
			j.append(chunk)
			all = append(all, chunk...)
			want := all[max(0, len(all)-capacity):]
			if j.head != uint64(len(all)) || j.low() != uint64(len(all)-len(want)) {
				t.Fatalf("cap %d: head %d low %d, want %d %d", capacity, j.head, j.low(), len(all), len(all)-len(want))
			}
			got := make([]byte, len(want))
			if n := j.readAt(got, j.low()); n != len(want) || !bytes.Equal(got, want) {
				t.Fatalf("cap %d step %d: journal content differs", capacity, i)
			}
		}
	}
}

func TestWindowAbsolute(t *testing.T) {
	var w window
	if w.room(0) != 0 || w.allows(0, 1) {
		t.Fatal("the zero window grants something")
	}
	w.grant(100)
	if w.grant(50) || w.limit != 100 {
		t.Fatal("a stale grant lowered the limit")
	}
	if !w.allows(90, 100) || w.allows(90, 101) || w.room(30) != 70 {
		t.Fatal("window arithmetic wrong")
	}
}

// stderr and stdout alternate: a continuous stderr flood cannot starve
// stdout.
func TestStderrDoesNotStarveStdout(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.appendOut([]byte("out"))
	var order []frame.Type
	for i := 0; i < 4; i++ {
		p.appendErr([]byte("e")) // a new stderr chunk every time
		f, ok := p.next(ep, make([]byte, 1))
		if !ok {
			t.Fatal("nothing to send")
		}
		order = append(order, f.Type)
	}
	stdout := 0
	for _, ty := range order {
		if ty == frame.TypeStdout {
			stdout++
		}
	}
	if stdout < 2 {
		t.Fatalf("frame order %v: stdout starved by stderr", order)
	}
}

// A broken stdin pipe (the process closed its stdin or exited) credits
// every buffered and later byte as written, so the window never leaks and
// a Runner at its limit is never left waiting for a grant.
func TestBrokenPipeNeverLeaksCredit(t *testing.T) {
	p, ep := testProvider(t, 4096, 100)
	p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: make([]byte, 100)})
	if fs := drainFrames(p, ep); len(fs) != 0 {
		t.Fatalf("granted %+v while the pipe is blocked", fs)
	}
	p.stdinFailed()
	fs := drainFrames(p, ep)
	if len(fs) != 1 || fs[0].Type != frame.TypeWindow || fs[0].Limit != 200 || fs[0].Accepted != 100 {
		t.Fatalf("after the pipe broke: %+v, want window limit 200", fs)
	}
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 100, Data: make([]byte, 100)}); err != nil {
		t.Fatal(err)
	}
	if p.inbuf.len() != 0 {
		t.Fatalf("%d bytes buffered for a broken pipe", p.inbuf.len())
	}
	fs = drainFrames(p, ep)
	if len(fs) != 1 || fs[0].Type != frame.TypeWindow || fs[0].Limit != 300 || fs[0].Accepted != 200 {
		t.Fatalf("stdin after the pipe broke: %+v, want window limit 300", fs)
	}
}

// A Runner that never reads and floods one-byte frames past its credit
// gets at most one pending input_buffer_full refusal: the provider's
// queue of refusals is bounded by one frame, whatever the flood.
func TestOverrunFloodQueuesOneRefusal(t *testing.T) {
	const credit = 4096
	p, ep := testProvider(t, 4096, credit)
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 0, Data: make([]byte, credit)}); err != nil {
		t.Fatal(err)
	}
	for range 100000 {
		if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: credit, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	refusals := 0
	for _, f := range drainFrames(p, ep) {
		if f.Type == frame.TypeRefuse {
			if f.Code != CodeInputBufferFull || f.Offset != credit {
				t.Fatalf("refusal %s at %d, want %s at %d", f.Code, f.Offset, CodeInputBufferFull, credit)
			}
			refusals++
		}
	}
	if refusals != 1 {
		t.Fatalf("a flood of 100000 overrunning frames queued %d refusals, want 1", refusals)
	}
	// The pipe takes some bytes; the Runner's resend fits, and a new
	// overrun after that is refused again at the new offset.
	p.stdinWrote(credit)
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: credit, Data: make([]byte, credit)}); err != nil || p.accepted != 2*credit {
		t.Fatalf("resend after the pipe drained: %v, accepted %d; want nil, %d", err, p.accepted, 2*credit)
	}
	if err := p.handle(ep, &frame.Frame{Type: frame.TypeStdin, Offset: 2 * credit, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if f := drainFrames(p, ep); len(f) == 0 || f[0].Type != frame.TypeRefuse || f[0].Offset != 2*credit {
		t.Fatalf("frames after a second overrun = %+v, want a refusal at %d first", f, 2*credit)
	}
}

// A hostile provider grants 2^62 and never acknowledges: the Runner takes
// stdin only up to its own cap of unacknowledged bytes, and takes more
// only as the provider accepts.
func TestRunnerCapsUnacknowledgedStdin(t *testing.T) {
	const capacity = 64 << 10
	r := &runnerState{id: frame.ProcessID{1}, stdinCap: capacity}
	if _, err := r.handle(&frame.Frame{Type: frame.TypeAttached, ID: r.id, Limit: 1 << 62, Window: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for i := 0; r.stdinRoom() > 0; i++ {
		if i > 1<<12 {
			t.Fatalf("the Runner took %d bytes of stdin for a provider that accepts nothing; want at most %d", r.total, capacity)
		}
		r.addStdin(chunk[:min(len(chunk), r.stdinRoom())])
	}
	if held := r.total - r.base; held != capacity {
		t.Fatalf("the Runner holds %d unacknowledged stdin bytes at its cap, want %d", held, capacity)
	}
	// The provider accepts half: that much room opens again.
	if _, err := r.handle(&frame.Frame{Type: frame.TypeWindow, Accepted: capacity / 2, Limit: 1 << 62}); err != nil {
		t.Fatal(err)
	}
	if room := r.stdinRoom(); room != capacity/2 {
		t.Fatalf("room after half was accepted = %d, want %d", room, capacity/2)
	}
}

// A provider's refusal message is hostile text: the Runner's error quotes
// it (escaped, bounded) and keeps the provider's code to branch on.
func TestProviderMessageQuoted(t *testing.T) {
	r := &runnerState{}
	_, err := r.handle(&frame.Frame{Type: frame.TypeRefuse, Code: CodeProcessAlreadyOpen, Message: "\x1b[2Jbusy\n" + strings.Repeat("x", 100)})
	if !errors.Is(err, CodeProcessAlreadyOpen) {
		t.Fatalf("handle(refuse) = %v, want %s", err, CodeProcessAlreadyOpen)
	}
	want := `refused: process_already_open: wire: the provider says "\x1b[2Jbusy\n` + strings.Repeat("x", 55) + `"... (109 bytes)`
	if err.Error() != want {
		t.Fatalf("error text\n%s\nwant\n%s", err, want)
	}
}
