package wire

import (
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// The agent may start a descendant in its own session (setsid), out of
// the process group a kill reaches, holding stdout and stderr open. The
// Runner's kill must still end the instance: the provider stops reading
// the pipes of a process it was told to kill, so the process is reaped
// and the instance released instead of staying reserved for as long as
// the descendant likes. (Here the descendant is cat on the process's
// stdin, which ends once the provider closes that pipe.)
func TestKillEndsAnInstanceWhoseDescendantHoldsStdout(t *testing.T) {
	srv := &Server{Command: command("sh", "-c", "exec 3<&0; setsid cat <&3 3<&- & echo started; exit 0")}
	addr := startServer(t, srv)
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	send := func(f *frame.Frame) {
		t.Helper()
		b, err := frame.Append(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	send(&frame.Frame{Type: frame.TypeOpen, ID: frame.ProcessID{1}, Version: frame.ProtocolVersion})
	dec := frame.NewDecoder(c)
	for {
		var f frame.Frame
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		if f.Type == frame.TypeStdout {
			break // the process runs and has started its descendant
		}
	}
	send(&frame.Frame{Type: frame.TypeKill})
	select {
	case <-srv.Done():
	case <-time.After(time.Minute):
		t.Fatal("the killed process was never reaped: an escaped descendant holds its stdout")
	}
}
