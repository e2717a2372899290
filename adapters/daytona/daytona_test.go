package daytona_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/internal/copytest"
)

const canary = "CANARY-daytona-key-0b41e2"

func newClient(t testing.TB) (*daytona.Client, *fakeDaytona, *vendortest.Edge) {
	t.Helper()
	f := newFakeDaytona(t, canary)
	edge := &vendortest.Edge{Keys: map[string]string{"lease:daytona": canary}}
	c, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: f.apiSrv.URL, Snapshot: "daytona-small"})
	if err != nil {
		t.Fatal(err)
	}
	return c, f, edge
}

func create(t *testing.T, c *daytona.Client, id string) *daytona.Sandbox {
	t.Helper()
	s, err := c.Create(context.Background(), daytona.SandboxSpec{ID: id, Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Destroy(context.Background()) })
	return s
}

type result struct {
	stdout, stderr string
	status         int
	err            error
}

// collect reads both streams, writes stdin (without closing it: a
// session's stdin cannot end) and waits.
func collect(t *testing.T, p *daytona.Process, stdin string) result {
	t.Helper()
	var r result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); b, _ := io.ReadAll(p.Stdout()); r.stdout = string(b) }()
	go func() { defer wg.Done(); b, _ := io.ReadAll(p.Stderr()); r.stderr = string(b) }()
	if stdin != "" {
		if _, err := p.Stdin().Write([]byte(stdin)); err != nil {
			t.Errorf("stdin: %v", err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("process did not finish in 30 s")
	}
	r.status, r.err = p.Wait()
	return r
}

func open(t *testing.T, s *daytona.Sandbox, argv ...string) *daytona.Process {
	t.Helper()
	p, err := s.OpenProcess(context.Background(), daytona.Command{Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSeparateStreamsAndExitCodes(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-1")
	// Output long enough to cross many WebSocket messages, on both
	// streams, interleaved.
	r := collect(t, open(t, s, "/bin/sh", "-c", `i=0; while [ $i -lt 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done; exit 7`), "")
	if r.err != nil || r.status != 7 {
		t.Fatalf("Wait = %d, %v; want 7", r.status, r.err)
	}
	var wantOut, wantErr strings.Builder
	for i := range 300 {
		fmt.Fprintf(&wantOut, "out %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	if r.stdout != wantOut.String() {
		t.Errorf("stdout: %d bytes, want %d", len(r.stdout), wantOut.Len())
	}
	if r.stderr != wantErr.String() {
		t.Errorf("stderr: %d bytes, want %d", len(r.stderr), wantErr.Len())
	}
	for _, code := range []int{0, 1, 255} {
		if r := collect(t, open(t, s, "/bin/sh", "-c", fmt.Sprintf("exit %d", code)), ""); r.status != code || r.err != nil {
			t.Errorf("exit %d: Wait = %d, %v", code, r.status, r.err)
		}
	}
}

func TestStdinGapsAreRefused(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-gap")
	p := open(t, s, "/bin/sh", "-c", `read a; read b; printf '%s|%s' "$a" "$b"`)
	if _, err := p.Stdin().Write([]byte("one\ntw")); err != nil {
		t.Fatal(err)
	}
	if err := p.Stdin().Close(); !errors.Is(err, daytona.CodeStdinInexpressible) {
		t.Errorf("Close with a partial line = %v, want stdin_inexpressible", err)
	}
	if _, err := p.Stdin().Write([]byte("o\n")); err != nil {
		t.Fatal(err)
	}
	r := collect(t, p, "")
	if r.stdout != "one|two\n" || r.status != 0 {
		t.Errorf("stdout %q status %d, want %q 0 (the daemon adds the last newline)", r.stdout, r.status, "one|two\n")
	}
	q := open(t, s, "cat")
	if _, err := q.Stdin().Write([]byte("\xff\xfe\n")); !errors.Is(err, daytona.CodeStdinInexpressible) {
		t.Errorf("non-UTF-8 stdin = %v, want stdin_inexpressible", err)
	}
	if err := q.Stdin().Close(); !errors.Is(err, daytona.CodeStdinInexpressible) {
		t.Errorf("Close = %v, want stdin_inexpressible: a session's input never ends", err)
	}
	if err := q.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := collect(t, q, ""); r.status != 137 {
		t.Errorf("killed cat: %d, %v", r.status, r.err)
	}
}

func TestKillReachesChildrenAndOneLiveProcess(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-k")
	p := open(t, s, "/bin/sh", "-c", "sleep 100 & sleep 100; wait")
	if _, err := s.OpenProcess(context.Background(), daytona.Command{Argv: []string{"true"}}); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("second OpenProcess = %v, want process_already_open", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := collect(t, p, ""); r.status != 137 || r.err != nil {
		t.Fatalf("killed: %d, %v", r.status, r.err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("second Kill = %v", err)
	}
	if r := collect(t, open(t, s, "true"), ""); r.status != 0 {
		t.Errorf("after reaping: %d, %v", r.status, r.err)
	}
}

func TestEnvAndDir(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-env")
	dir := t.TempDir()
	p, err := s.OpenProcess(context.Background(), daytona.Command{Argv: []string{"/bin/sh", "-c", `printf '%s:%s\n' "$GREETING" "$(pwd)"`}, Env: []string{"GREETING=it's"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(t, p, ""); r.stdout != "it's:"+dir+"\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if _, err := s.OpenProcess(context.Background(), daytona.Command{Argv: []string{"true"}, Env: []string{"A B=c"}}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("a bad env name = %v, want config_invalid", err)
	}
}

func TestDestroy(t *testing.T) {
	c, f, _ := newClient(t)
	s := create(t, c, "inst-d")
	p := open(t, s, "sleep", "100")
	if err := s.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(context.Background()); err != nil {
		t.Errorf("second Destroy = %v", err)
	}
	if r := collect(t, p, ""); r.status != 137 {
		t.Errorf("process after Destroy: %d, %v", r.status, r.err)
	}
	if _, err := s.OpenProcess(context.Background(), daytona.Command{Argv: []string{"true"}}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("OpenProcess after Destroy = %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sandboxes) != 0 || f.polls == 0 {
		t.Errorf("fake holds %d sandboxes after %d polls", len(f.sandboxes), f.polls)
	}
	if got := fmt.Sprint(f.created[0]["networkBlockAll"], f.created[0]["public"]); got != "true false" {
		t.Errorf("CreateSandbox carried networkBlockAll, public = %s", got)
	}
}

func TestCredentialNeverVisible(t *testing.T) {
	c, _, edge := newClient(t)
	s := create(t, c, "inst-canary")
	p := open(t, s, "/bin/sh", "-c", "read a; echo $a")
	r := collect(t, p, "x\n")
	for name, v := range map[string]any{"client": c, "sandbox": s, "process": p, "evidence": p.Evidence(), "result": r} {
		if vendortest.Holds(v, canary) || strings.Contains(fmt.Sprintf("%+v %#v", v, v), canary) {
			t.Errorf("the %s holds the API key", name)
		}
	}
	if edge.Sent() < 5 {
		t.Errorf("the edge sent %d requests", edge.Sent())
	}
}

func TestEvidence(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-ev")
	p := open(t, s, "true")
	collect(t, p, "")
	ev := p.Evidence()
	if ev.Label != checkfu.LabelMock || ev.Grade != checkfu.AdvisoryFilter || ev.NetworkMode != "none" || ev.Instance != "inst-ev" || ev.RootImage != "daytona-small" {
		t.Errorf("evidence = %+v", ev)
	}
	if len(ev.Stdio) != len(daytona.StdioCaveats()) {
		t.Errorf("evidence states %d stdio caveats, want %d", len(ev.Stdio), len(daytona.StdioCaveats()))
	}
}

// TestNetworkNoneIsReal: networkBlockAll gives the fake's process only a
// loopback interface.
func TestNetworkNoneIsReal(t *testing.T) {
	if !vendortest.IsolationReal {
		t.Skip("no network namespaces on this OS")
	}
	c, _, _ := newClient(t)
	r := collect(t, open(t, create(t, c, "inst-none"), "/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"), "")
	if r.stdout != "lo\n" {
		t.Errorf("interfaces under none: %q, want only lo", r.stdout)
	}
}

// TestStdioCaveatsIsACopy: what StdioCaveats returns, and so what one
// Evidence states, is its own.
func TestStdioCaveatsIsACopy(t *testing.T) {
	copytest.Fresh(t, "StdioCaveats", daytona.StdioCaveats, "stdin: carried exactly")
}
