package wire

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// The agent may start a descendant in its own session (setsid), out of
// the process group a kill reaches, holding stdout and stderr open. The
// Runner's kill must still end the instance: the provider stops reading
// the pipes of a process it was told to kill, so the process is reaped
// and the instance released instead of staying reserved for as long as
// the descendant likes. (Here the descendant is a sleep of 30 s that
// ignores stdin, so only the provider's closing of the pipes can end the
// instance in time; the test kills the sleep by its PID when it ends.
// The descendant prints its PID itself, once it is in its own session,
// so the kill never arrives before it has left the process group.)
func TestKillEndsAnInstanceWhoseDescendantHoldsStdout(t *testing.T) {
	srv := &Server{Command: command("sh", "-c", "setsid sh -c 'echo $$; exec sleep 30' </dev/null & exit 0")}
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
	var pid int
	for {
		var f frame.Frame
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		if f.Type == frame.TypeStdout {
			// The process runs and has started its descendant.
			var err error
			if pid, err = strconv.Atoi(strings.TrimSpace(string(f.Data))); err != nil {
				t.Fatalf("stdout %q is not the descendant's pid", f.Data)
			}
			break
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	send(&frame.Frame{Type: frame.TypeKill})
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed process was not reaped within 10 s: an escaped descendant holds its stdout")
	}
}
