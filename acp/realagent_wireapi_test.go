package acp_test

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"os/exec"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/internal/cutproxy"
	"github.com/google/go-cmp/cmp"
)

// TestRealAgentThroughWireAPI drives the real agent through the acp/wire
// Go API in process (a wire.Server on loopback, a wire.Runner whose
// Stdin/Stdout are the client's pipes) with a cutproxy between them that
// severs the connection mid-turn twice. The transcript equals the direct
// one and the Runner reports the agent's exit status 0.
func TestRealAgentThroughWireAPI(t *testing.T) {
	argv := agentCommand(t)
	want := referenceTurn(t, argv)

	serverKeys, runnerKeys := pinnedPair(t)
	srv := &wire.Server{Keys: serverKeys, Command: func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-served })
	proxy, err := cutproxy.New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })

	stdinR, stdinW := io.Pipe()   // client -> runner -> agent stdin
	stdoutR, stdoutW := io.Pipe() // agent stdout -> runner -> client
	type result struct {
		status int
		err    error
	}
	ran := make(chan result, 1)
	go func() {
		r := &wire.Runner{
			Keys: runnerKeys,
			Dial: func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", proxy.Addr())
			},
			Stdin:  stdinR,
			Stdout: stdoutW,
		}
		status, err := r.Run(context.Background())
		stdoutW.Close()
		ran <- result{status, err}
	}()
	t.Cleanup(func() { stdinW.Close(); stdoutR.Close() })

	var tr acptest.Transcript
	var updates int
	got := runTurnWith(t, stdoutR, stdinW, &tr, acp.Config{
		OnUpdate: func(n acp.SessionNotification) {
			tr.OnUpdate(n)
			if updates++; updates == 2 {
				proxy.CutAfter(3)
			}
		},
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			proxy.Cut()
			return tr.OnPermission(ctx, req)
		},
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript through the wire API with cuts (-direct +wire):\n%s", diff)
	}
	if c := proxy.Cuts(); c < 2 {
		t.Errorf("only %d cuts landed, want at least 2", c)
	}
	if res := <-ran; res.err != nil || res.status != 0 {
		t.Errorf("Runner.Run = %d, %v; want 0, nil", res.status, res.err)
	}
}

// pinnedPair returns the Keys of a provider and a Runner that pin each
// other: the wire refuses an unauthenticated peer over TCP.
func pinnedPair(t *testing.T) (server, runner *wire.Keys) {
	t.Helper()
	sPriv, sPub, err := wire.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rPriv, rPub, err := wire.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if server, err = wire.NewKeys(sPriv, rPub); err != nil {
		t.Fatal(err)
	}
	if runner, err = wire.NewKeys(rPriv, sPub); err != nil {
		t.Fatal(err)
	}
	return server, runner
}
