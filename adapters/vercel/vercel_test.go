package vercel_test

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
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

const canary = "CANARY-vercel-token-5d1c"

func newClient(t testing.TB) (*vercel.Client, *fakeVercel, *vendortest.Edge) {
	t.Helper()
	f := newFakeVercel(t, canary, "team_1")
	edge := &vendortest.Edge{Keys: map[string]string{"lease:vercel": canary}}
	c, err := vercel.New(vercel.Config{Edge: edge, Credential: "lease:vercel", TeamID: "team_1", ProjectID: "prj_1", BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, f, edge
}

func create(t *testing.T, c *vercel.Client, id, policy string) *vercel.Sandbox {
	t.Helper()
	s, err := c.Create(context.Background(), vercel.SandboxSpec{ID: id, Policy: vendortest.Compiled(t, policy), ProfileDigest: "sha256:p"})
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

func collect(t *testing.T, p *vercel.Process) result {
	t.Helper()
	var r result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); b, _ := io.ReadAll(p.Stdout()); r.stdout = string(b) }()
	go func() { defer wg.Done(); b, _ := io.ReadAll(p.Stderr()); r.stderr = string(b) }()
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

func open(t *testing.T, s *vercel.Sandbox, argv ...string) *vercel.Process {
	t.Helper()
	p, err := s.OpenProcess(context.Background(), vercel.Command{Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStreamsAndExitCodes(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-1", `{"type":"none"}`)
	r := collect(t, open(t, s, "/bin/sh", "-c", `i=0; while [ $i -lt 2000 ]; do printf 'o%d ' $i; printf 'é%d ' $i >&2; i=$((i+1)); done; exit 9`))
	var wo, we strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&wo, "o%d ", i)
		fmt.Fprintf(&we, "é%d ", i)
	}
	if r.err != nil || r.status != 9 || r.stdout != wo.String() || r.stderr != we.String() {
		t.Errorf("status %d err %v stdout %d/%d stderr %d/%d bytes", r.status, r.err, len(r.stdout), wo.Len(), len(r.stderr), we.Len())
	}
	for _, code := range []int{0, 1, 255} {
		if r := collect(t, open(t, s, "/bin/sh", "-c", fmt.Sprintf("exit %d", code))); r.status != code || r.err != nil {
			t.Errorf("exit %d: %d, %v", code, r.status, r.err)
		}
	}
}

func TestNoStdin(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-in", `{"type":"none"}`)
	p := open(t, s, "cat")
	if _, err := p.Stdin().Write([]byte("x")); !errors.Is(err, vercel.CodeStdinUnsupported) {
		t.Errorf("Write = %v, want stdin_unsupported", err)
	}
	if err := p.Stdin().Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if r := collect(t, p); r.status != 0 || r.stdout != "" {
		t.Errorf("cat with no stdin: %d %q, want 0 and nothing (end of input at once)", r.status, r.stdout)
	}
}

func TestKillAndOneLiveProcess(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-k", `{"type":"none"}`)
	p := open(t, s, "sleep", "100")
	if _, err := s.OpenProcess(context.Background(), vercel.Command{Argv: []string{"true"}}); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("second OpenProcess = %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := collect(t, p); r.status != 137 || r.err != nil {
		t.Fatalf("killed: %d, %v", r.status, r.err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("second Kill = %v", err)
	}
	if r := collect(t, open(t, s, "true")); r.status != 0 {
		t.Errorf("after reaping: %d, %v", r.status, r.err)
	}
}

func TestEnvDirAndDestroy(t *testing.T) {
	c, f, _ := newClient(t)
	s := create(t, c, "inst-d", `{"type":"unrestricted"}`)
	dir := t.TempDir()
	p, err := s.OpenProcess(context.Background(), vercel.Command{Argv: []string{"/bin/sh", "-c", `printf '%s:%s' "$G" "$(pwd)"`}, Env: []string{"G=hi"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(t, p); r.stdout != "hi:"+dir {
		t.Errorf("stdout %q", r.stdout)
	}
	if err := s.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(context.Background()); err != nil {
		t.Errorf("second Destroy = %v", err)
	}
	if _, err := s.OpenProcess(context.Background(), vercel.Command{Argv: []string{"true"}}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("OpenProcess after Destroy = %v", err)
	}
	f.mu.Lock()
	np := fmt.Sprint(f.created[0]["networkPolicy"])
	f.mu.Unlock()
	if !strings.Contains(np, "allow:[0.0.0.0/0 2000::/3]") || !strings.Contains(np, "10.0.0.0/8") {
		t.Errorf("CreateSandbox carried networkPolicy %s", np)
	}
}

func TestCredentialNeverVisible(t *testing.T) {
	c, _, edge := newClient(t)
	s := create(t, c, "inst-c", `{"type":"none"}`)
	p := open(t, s, "echo", "x")
	r := collect(t, p)
	for name, v := range map[string]any{"client": c, "sandbox": s, "process": p, "evidence": p.Evidence(), "result": r} {
		if vendortest.Holds(v, canary) || strings.Contains(fmt.Sprintf("%+v %#v", v, v), canary) {
			t.Errorf("the %s holds the token", name)
		}
	}
	if edge.Sent() < 2 {
		t.Errorf("the edge sent %d requests", edge.Sent())
	}
	if ev := p.Evidence(); ev.Label != checkfu.LabelMock || ev.Grade != checkfu.AdvisoryFilter || len(ev.Stdio) != 2 {
		t.Errorf("evidence %+v", ev)
	}
}

// TestNetworkNoneIsReal: deny-all gives the fake's process only a
// loopback interface.
func TestNetworkNoneIsReal(t *testing.T) {
	if !vendortest.IsolationReal {
		t.Skip("no network namespaces on this OS")
	}
	c, _, _ := newClient(t)
	r := collect(t, open(t, create(t, c, "inst-none", `{"type":"none"}`), "/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"))
	if r.stdout != "lo\n" {
		t.Errorf("interfaces under none: %q, want only lo", r.stdout)
	}
}
