package wiretest_test

import (
	"bufio"
	"net"
	"os/exec"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
	"github.com/checkfu/checkfu/acp/wire/wiretest"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// serve starts a wire.Server running "cat" on a Unix socket.
func serve(t testing.TB) (func() (net.Conn, error), func()) {
	path := t.TempDir() + "/wire.sock"
	ln, err := wire.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &wire.Server{Command: func() *exec.Cmd { return exec.Command("cat") }, InputCredit: wire.MinWindow}
	go srv.Serve(ln)
	return func() (net.Conn, error) { return net.Dial("unix", path) }, func() { srv.Close() }
}

// A faultyProvider is the real Server behind a frame-rewriting proxy
// that gives it one of the bugs a provider implementer could write
// ("" forwards every frame unchanged).
type faultyProvider struct {
	bug  string
	dial func() (net.Conn, error)

	mu   sync.Mutex
	head uint64 // the highest stdout offset the provider has sent; guarded by mu
}

// extraCredit is what the "grants credit it does not have" provider adds
// to every limit: the pipe's buffer, counted as if it were its own.
const extraCredit = 2 * wire.MinWindow

func (p *faultyProvider) Dial() (net.Conn, error) {
	up, err := p.dial()
	if err != nil {
		return nil, err
	}
	runner, mine := net.Pipe()
	var shift struct {
		sync.Mutex
		by uint64
	}
	pump := func(src, dst net.Conn, fromRunner bool) {
		defer src.Close()
		defer dst.Close()
		dec := frame.NewDecoder(bufio.NewReader(src))
		for {
			var f frame.Frame
			if err := dec.Decode(&f); err != nil {
				return
			}
			switch {
			case fromRunner && f.Type == frame.TypeResume && p.bug == "replays from 0 numbered from the cursor":
				// Serves its journal from the start, but numbers the
				// frames from the Runner's cursor.
				shift.Lock()
				shift.by, f.Offset = f.Offset, 0
				shift.Unlock()
			case fromRunner && f.Type == frame.TypeResume && p.bug == "clamps a cursor above the head":
				p.mu.Lock()
				f.Offset = min(f.Offset, p.head)
				p.mu.Unlock()
			case !fromRunner && f.Type == frame.TypeStdout:
				p.mu.Lock()
				p.head = max(p.head, f.Offset+uint64(len(f.Data)))
				p.mu.Unlock()
				shift.Lock()
				f.Offset += shift.by
				shift.Unlock()
			case !fromRunner && (f.Type == frame.TypeWindow || f.Type == frame.TypeAttached) && p.bug == "grants credit it does not have":
				f.Limit += extraCredit
			}
			b, err := frame.Append(nil, &f)
			if err != nil {
				return
			}
			if _, err := dst.Write(b); err != nil {
				return
			}
		}
	}
	go pump(mine, up, true)
	go pump(up, mine, false)
	return runner, nil
}

// brokenProviders are the bugs TestProvider is proved to catch.
var brokenProviders = []string{
	"replays from 0 numbered from the cursor",
	"grants credit it does not have",
	"clamps a cursor above the head",
}

func faulty(bug string) wiretest.MakeProviderOf[*suitetest.Recorder] {
	return func(t *suitetest.Recorder) (func() (net.Conn, error), func()) {
		dial, stop := serve(t)
		p := &faultyProvider{bug: bug, dial: dial}
		return p.Dial, stop
	}
}

func TestProviderRejectsBrokenProviders(t *testing.T) {
	suitetest.Accepts(t, "the Server behind a faithful proxy", func(r *suitetest.Recorder) { wiretest.TestProvider(r, faulty("")) })
	for _, bug := range brokenProviders {
		suitetest.Rejects(t, bug, func(r *suitetest.Recorder) { wiretest.TestProvider(r, faulty(bug)) })
	}
}
