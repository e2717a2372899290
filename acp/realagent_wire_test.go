package acp_test

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/internal/cutproxy"
	"github.com/google/go-cmp/cmp"
)

// startServe runs the real `checkfu process serve -listen 127.0.0.1:0 --
// argv...` and returns the address it printed.
func startServe(t *testing.T, argv []string) string {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), append([]string{"process", "serve", "-listen", "127.0.0.1:0", "--"}, argv...)...)
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("serve printed %q (%v), want \"listening on ADDR\"", line, err)
	}
	return addr
}

// startAttach runs the real `checkfu process attach -connect addr` and
// returns its stdout and stdin: the agent's output and input.
func startAttach(t *testing.T, addr string) (io.Reader, io.WriteCloser, func() error) {
	t.Helper()
	return startProcess(t, []string{clitest.Binary(t), "process", "attach", "-connect", addr})
}

// referenceTranscript runs one turn of the real agent directly, once per
// test binary, as the transcript every other path must reproduce.
var reference struct {
	once  sync.Once
	lines []string
}

func referenceTurn(t *testing.T, argv []string) []string {
	t.Helper()
	reference.once.Do(func() {
		out, in, wait := startProcess(t, argv)
		reference.lines = runTurn(t, out, in)
		if err := wait(); err != nil {
			t.Errorf("agent exit: %v", err)
		}
	})
	if reference.lines == nil {
		t.Fatal("the direct reference turn failed")
	}
	return reference.lines
}

// TestRealAgentThroughServeAttach drives the real agent through the real
// `checkfu process serve` and `checkfu process attach` binaries on
// loopback: the transcript equals the direct one, and attach exits with
// the agent's status 0 after the client closes its input.
func TestRealAgentThroughServeAttach(t *testing.T) {
	argv := agentCommand(t)
	want := referenceTurn(t, argv)
	addr := startServe(t, argv)
	out, in, wait := startAttach(t, addr)
	got := runTurn(t, out, in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript through serve/attach (-direct +wire):\n%s", diff)
	}
	if err := wait(); err != nil {
		t.Errorf("attach: %v", err)
	}
}

// TestRealAgentThroughCuts drives the real agent through serve, a
// cutproxy and attach, severing the connection several times mid-turn:
// right after the first update, in the middle of the permission answer
// (a few bytes into it), and a few bytes into the output after it. The
// transcript the Runner sees equals the direct one: nothing lost, nothing
// repeated.
func TestRealAgentThroughCuts(t *testing.T) {
	argv := agentCommand(t)
	want := referenceTurn(t, argv)
	addr := startServe(t, argv)
	proxy, err := cutproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	out, in, wait := startAttach(t, proxy.Addr())

	var tr acptest.Transcript
	var updates int
	cfg := acp.Config{
		OnUpdate: func(n acp.SessionNotification) {
			tr.OnUpdate(n)
			updates++
			switch updates {
			case 1:
				proxy.Cut()
			case 3:
				proxy.CutAfter(5)
			}
		},
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			proxy.CutAfter(40) // lands inside the answer's line
			return tr.OnPermission(ctx, req)
		},
	}
	got := runTurnWith(t, out, in, &tr, cfg)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript through cuts (-direct +cut):\n%s", diff)
	}
	if c := proxy.Cuts(); c < 3 {
		t.Errorf("only %d cuts landed, want at least 3", c)
	}
	if err := wait(); err != nil {
		t.Errorf("attach: %v", err)
	}
}
