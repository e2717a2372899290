package adaptertest

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/acp/wire/wiretest"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// wired reports whether inst's processes run across acp/wire: whatever
// its provider declares, such an instance is placed remote.
func wired(inst adapters.Instance) bool {
	_, ok := inst.(adapters.Wired)
	return ok
}

// testWire checks what only a remote provider has: the stdin credit
// window and the stdout replay journal of acp/wire. Placement is judged
// by what the instance is: one that runs across the wire is checked, and
// rejected when its provider declares itself in_process.
func testWire(t tester, s *suite, p adapters.Provider) {
	declared := p.Describe().Placement
	inst, _ := s.create(t, p, "")
	switch {
	case wired(inst) && declared != admission.PlacementRemote:
		t.Errorf("the instance runs across acp/wire (adapters.Wired), but its provider declares placement %s: a wired provider is remote", declared)
	case !wired(inst) && declared == admission.PlacementRemote:
		t.Fatal("a remote provider's instance does not implement adapters.Wired, so its wire cannot be checked")
	case !wired(inst):
		t.Skip("local provider: stdin is the child's own pipe (no credit window, no input_buffer_full) and stdout is its pipe (no replay journal); nothing crosses a wire")
	}
	t.run("Drop", func(t tester) { testWireDrop(t, s, p) })
	rt := t.real()
	if rt == nil {
		t.Skip("recorded run: wiretest needs a *testing.T")
	}
	e, err := inst.(adapters.Wired).PrepareWire(context.Background(), adapters.ProcessSpec{Argv: s.sh("cat")})
	if err != nil {
		t.Fatalf("PrepareWire: %v", err)
	}
	if e.Keys != nil {
		t.Skip("the endpoint needs TLS keys; wiretest speaks raw frames, so only the Drop subtest ran")
	}
	wiretest.TestProvider(rt, func(wt *testing.T) (func() (net.Conn, error), func()) {
		inst, _ := s.create(realT{wt}, p, "")
		e, err := inst.(adapters.Wired).PrepareWire(context.Background(), adapters.ProcessSpec{Argv: s.sh("cat")})
		if err != nil {
			wt.Fatalf("PrepareWire: %v", err)
		}
		return func() (net.Conn, error) { return e.Dial(context.Background()) }, func() { inst.Destroy(context.Background()) }
	})
}

// reconnectDelay is how long the Drop subtest's Runner stays away: long
// enough for a provider without a detach grace to evict, far below any
// sane grace.
const reconnectDelay = time.Second

// testWireDrop streams 4 MiB through cat and cuts the first connection
// after 256 KiB of provider frames, then stays away for reconnectDelay:
// the Runner must resume and deliver every byte exactly once.
func testWireDrop(t tester, s *suite, p adapters.Provider) {
	inst, _ := s.create(t, p, "")
	e, err := inst.(adapters.Wired).PrepareWire(context.Background(), adapters.ProcessSpec{Argv: s.sh("cat")})
	if err != nil {
		t.Fatalf("PrepareWire: %v", err)
	}
	dial := e.Dial
	var dials atomic.Int32
	in := data(4, 4<<20)
	var out bytes.Buffer
	r := &wire.Runner{
		Dial: func(ctx context.Context) (net.Conn, error) {
			if n := dials.Add(1); n > 1 {
				if n == 2 { // away for a while, as a Runner on a real network would be
					select {
					case <-time.After(reconnectDelay):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return dial(ctx)
			}
			c, err := dial(ctx)
			if err != nil {
				return c, err
			}
			if e.Keys != nil { // TLS runs over any net.Conn
				return &cutConn{Conn: c, after: 256 << 10}, nil
			}
			// acp/wire authenticates a Unix socket by its peer's uid, and
			// only a *net.UnixConn is one: cut through a Unix proxy.
			return cutProxy(t, c, 256<<10)
		},
		Keys:  e.Keys,
		Stdin: bytes.NewReader(in), Stdout: &out,
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var status int
	s.within(t, "a run across a dropped connection", func() { status, err = r.Run(ctx) })
	if err != nil || status != 0 {
		t.Fatalf("Run across a drop: status %d, %v", status, err)
	}
	if dials.Load() < 2 {
		t.Errorf("the connection was dialled %d times; the cut did not happen", dials.Load())
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Errorf("across a drop: %d bytes delivered of %d (equal false)", out.Len(), len(in))
	}
}

// cutProxy returns a Unix socket whose peer relays to and from up, and
// closes both once after bytes have come from up.
func cutProxy(t tester, up net.Conn, after int) (net.Conn, error) {
	path := filepath.Join(t.TempDir(), "cut.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		up.Close()
		return nil, err
	}
	defer ln.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		up.Close()
		return nil, err
	}
	peer, err := ln.Accept()
	if err != nil {
		c.Close()
		up.Close()
		return nil, err
	}
	go func() {
		io.Copy(up, peer)
		up.Close()
	}()
	go func() {
		io.Copy(peer, &cutConn{Conn: up, after: after})
		peer.Close()
	}()
	return c, nil
}

// A cutConn closes itself once it has read after bytes.
type cutConn struct {
	net.Conn
	after int
	read  int
}

func (c *cutConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read += n
	if c.read >= c.after {
		c.Conn.Close()
	}
	return n, err
}
