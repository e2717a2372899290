package acp_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/internal/cutproxy"
	"github.com/google/go-cmp/cmp"
)

// startServe runs the real `checkfu process serve -listen 127.0.0.1:0 --
// argv...` and returns the address it printed.
func startServe(t *testing.T, k cliKeys, argv []string) string {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), append([]string{"process", "serve", "-listen", "127.0.0.1:0", "-key", k.serverKey, "-peer", k.runnerPub, "--"}, argv...)...)
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
func startAttach(t *testing.T, k cliKeys, addr string) (io.Reader, io.WriteCloser, func() error) {
	t.Helper()
	return startProcess(t, []string{clitest.Binary(t), "process", "attach", "-connect", addr, "-key", k.runnerKey, "-peer", k.serverPub})
}

// cliKeys are the PEM files of a serve/attach pair that pin each other:
// the wire refuses an unauthenticated peer over TCP.
type cliKeys struct{ serverKey, serverPub, runnerKey, runnerPub string }

func newCLIKeys(t *testing.T) cliKeys {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var k cliKeys
	for _, side := range []struct {
		key, pub *string
		name     string
	}{{&k.serverKey, &k.serverPub, "server"}, {&k.runnerKey, &k.runnerPub, "runner"}} {
		priv, pub, err := wire.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		*side.key = write(side.name+".pem", priv)
		*side.pub = write(side.name+".pub.pem", pub)
	}
	return k
}

// references holds, per agent command, the transcript of one turn run
// directly: the transcript every other path must reproduce.
var references struct {
	mu    sync.Mutex
	lines map[string][]string
}

func referenceTurn(t *testing.T, argv []string) []string {
	t.Helper()
	key := strings.Join(argv, " ")
	references.mu.Lock()
	defer references.mu.Unlock()
	if lines, ok := references.lines[key]; ok {
		return lines
	}
	out, in, wait := startProcess(t, argv)
	lines := runTurn(t, out, in)
	if err := wait(); err != nil {
		t.Fatalf("agent exit: %v", err)
	}
	if references.lines == nil {
		references.lines = map[string][]string{}
	}
	references.lines[key] = lines
	return lines
}

// TestRealAgentThroughServeAttach drives the real agent through the real
// `checkfu process serve` and `checkfu process attach` binaries on
// loopback: the transcript equals the direct one, and attach exits with
// the agent's status 0 after the client closes its input.
func TestRealAgentThroughServeAttach(t *testing.T) {
	argv := agentCommand(t)
	want := referenceTurn(t, argv)
	keys := newCLIKeys(t)
	addr := startServe(t, keys, argv)
	out, in, wait := startAttach(t, keys, addr)
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
	throughCuts(t, agentCommand(t), 3)
}

// TestSDKAgentThroughCuts is TestRealAgentThroughCuts with the small agent
// on the official TypeScript SDK (acp/testdata/sdk-agent.mjs). That agent
// does not pause between messages, so its last output may be past the proxy
// before the third cut is armed: two cuts must land (after the first update
// and inside the permission answer), the third may.
func TestSDKAgentThroughCuts(t *testing.T) {
	throughCuts(t, sdkAgentCommand(t), 2)
}

// throughCuts runs a turn of argv through serve, a cutproxy and attach,
// cutting as TestRealAgentThroughCuts describes; at least minCuts must land.
func throughCuts(t *testing.T, argv []string, minCuts int64) {
	want := referenceTurn(t, argv)
	keys := newCLIKeys(t)
	addr := startServe(t, keys, argv)
	proxy, err := cutproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	out, in, wait := startAttach(t, keys, proxy.Addr())

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
	if c := proxy.Cuts(); c < minCuts {
		t.Errorf("only %d cuts landed, want at least %d", c, minCuts)
	}
	if err := wait(); err != nil {
		t.Errorf("attach: %v", err)
	}
}
