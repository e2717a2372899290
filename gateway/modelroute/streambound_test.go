package modelroute_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/gateway/modelroute"
)

// TestRelayStreamBound: a stream of exactly MaxStreamBytes is relayed
// whole; one byte more and the event that passes the bound is not
// written, nor anything after it, the whole events before it are, and
// the relay ends with CodeModelStreamTooLarge.
func TestRelayStreamBound(t *testing.T) {
	const size = 1024
	ev := "data: " + strings.Repeat("x", size-len("data: ")-2) + "\n\n"
	long := "data: " + strings.Repeat("y", size+1-len("data: ")-2) + "\n\n"
	n := modelroute.MaxStreamBytes / size
	if n*size != modelroute.MaxStreamBytes {
		t.Fatalf("MaxStreamBytes %d is not a multiple of %d", modelroute.MaxStreamBytes, size)
	}
	// Exactly the bound: n events.
	var out counter
	_, err := modelroute.Relay(&out, nil, &repeated{unit: ev, n: n}, modelroute.OpenAIChat, nil)
	if err != nil || out.n != modelroute.MaxStreamBytes {
		t.Fatalf("a stream of the bound: %v, wrote %d of %d", err, out.n, modelroute.MaxStreamBytes)
	}
	// One byte over: the last event is one byte longer, and another
	// follows it.
	out = counter{}
	_, err = modelroute.Relay(&out, nil, &repeated{unit: ev, n: n - 1, tail: long + "data: zz\n\n"}, modelroute.OpenAIChat, nil)
	if !errors.Is(err, modelroute.CodeModelStreamTooLarge) || out.n != modelroute.MaxStreamBytes-size || out.saw {
		t.Fatalf("a stream one byte over the bound: %v, wrote %d (want %d), wrote the event past it: %v", err, out.n, modelroute.MaxStreamBytes-size, out.saw)
	}
}

// counter counts what is written to it, and notes whether it saw a 'y'
// or a 'z' (TestRelayStreamBound's events past the bound).
type counter struct {
	n   int
	saw bool
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += len(p)
	c.saw = c.saw || strings.ContainsAny(string(p), "yz")
	return len(p), nil
}

// repeated reads as unit n times, then tail, in reads of at most 64 KiB.
type repeated struct {
	unit, tail string
	n, off     int // units read whole; bytes read of the current one
	tailOff    int
}

func (r *repeated) Read(p []byte) (int, error) {
	p = p[:min(len(p), 64<<10)]
	w := 0
	for w < len(p) && r.n > 0 {
		c := copy(p[w:], r.unit[r.off:])
		w, r.off = w+c, r.off+c
		if r.off == len(r.unit) {
			r.n, r.off = r.n-1, 0
		}
	}
	for w < len(p) && r.tailOff < len(r.tail) {
		c := copy(p[w:], r.tail[r.tailOff:])
		w, r.tailOff = w+c, r.tailOff+c
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}
