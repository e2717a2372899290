package e2b_test

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

const canary = "CANARY-e2b-key-7f3a9c"

func newClient(t testing.TB) (*e2b.Client, *fakeE2B, *vendortest.Edge) {
	t.Helper()
	f := newFakeE2B(t, canary)
	edge := &vendortest.Edge{Keys: map[string]string{"lease:e2b": canary}}
	c, err := e2b.New(e2b.Config{Edge: edge, Credential: "lease:e2b", Template: "base", BaseURL: f.srv.URL, Envd: f.envdURL})
	if err != nil {
		t.Fatal(err)
	}
	return c, f, edge
}

func create(t *testing.T, c *e2b.Client, id, policy string) *e2b.Sandbox {
	t.Helper()
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: id, Policy: vendortest.Compiled(t, policy), ProfileDigest: "sha256:profile"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Destroy(context.Background()) })
	return s
}

type result struct {
	stdout, stderr []byte
	status         int
	err            error
}

func run(t *testing.T, s *e2b.Sandbox, stdin []byte, argv ...string) result {
	t.Helper()
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, p, stdin)
}

func collect(t *testing.T, p *e2b.Process, stdin []byte) result {
	t.Helper()
	var r result
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); r.stdout, _ = io.ReadAll(p.Stdout()) }()
	go func() { defer wg.Done(); r.stderr, _ = io.ReadAll(p.Stderr()) }()
	go func() {
		defer wg.Done()
		if len(stdin) > 0 {
			if _, err := p.Stdin().Write(stdin); err != nil {
				t.Errorf("stdin: %v", err)
			}
		}
		if err := p.Stdin().Close(); err != nil {
			t.Errorf("stdin close: %v", err)
		}
	}()
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

func TestStdioAndExitCodes(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-1", `{"type":"none"}`)
	big := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 40_000) // 720 KB, binary
	r := run(t, s, big, "/bin/sh", "-c", "cat; printf err >&2; exit 3")
	if r.err != nil || r.status != 3 {
		t.Fatalf("Wait = %d, %v; want 3, nil", r.status, r.err)
	}
	if !bytes.Equal(r.stdout, big) {
		t.Errorf("stdout: %d bytes, want the %d of stdin in order", len(r.stdout), len(big))
	}
	if string(r.stderr) != "err" {
		t.Errorf("stderr = %q, want %q", r.stderr, "err")
	}
	for _, code := range []int{0, 1, 255} {
		r := run(t, s, nil, "/bin/sh", "-c", fmt.Sprintf("exit %d", code))
		if r.status != code || r.err != nil {
			t.Errorf("exit %d: Wait = %d, %v", code, r.status, r.err)
		}
	}
}

func TestEnvAndDir(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-env", `{"type":"none"}`)
	dir := t.TempDir()
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"/bin/sh", "-c", "printf %s:%s \"$GREETING\" \"$(pwd)\""}, Env: []string{"GREETING=hi"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(t, p, nil)
	if want := "hi:" + dir; string(r.stdout) != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}

func TestKillAndOneLiveProcess(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-kill", `{"type":"none"}`)
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"/bin/sh", "-c", "exec sleep 100"}})
	if err != nil {
		t.Fatal(err)
	}
	// Kill is idempotent: on a failure below, the test ends at once
	// rather than when sleep does.
	t.Cleanup(func() { p.Kill() })
	if _, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}}); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("second OpenProcess = %v, want process_already_open", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	r := collect(t, p, nil)
	if r.status != 137 || r.err != nil {
		t.Fatalf("killed: Wait = %d, %v; want 137", r.status, r.err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("second Kill = %v, want nil (idempotent)", err)
	}
	if r := run(t, s, nil, "true"); r.status != 0 {
		t.Errorf("after reaping, a new process: %d, %v", r.status, r.err)
	}
}

func TestDestroy(t *testing.T) {
	c, f, _ := newClient(t)
	s := create(t, c, "inst-d", `{"type":"none"}`)
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"sleep", "100"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(context.Background()); err != nil {
		t.Errorf("second Destroy = %v", err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, p.Stdout())
		_, _ = io.Copy(io.Discard, p.Stderr())
		p.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Destroy left the process running")
	}
	if _, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}}); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("OpenProcess after Destroy = %v, want sandbox_destroyed", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sandboxes) != 0 {
		t.Errorf("the fake still holds %d sandboxes", len(f.sandboxes))
	}
}

// TestCreateSendsMappedPolicy checks the policy the control plane
// receives is MapPolicy's, and that the request carried the key.
func TestCreateSendsMappedPolicy(t *testing.T) {
	c, f, _ := newClient(t)
	s := create(t, c, "inst-net", `{"type":"allowlist","allowed_hosts":["api.example.com","pkg.example.org:80"]}`)
	f.mu.Lock()
	body := f.created[len(f.created)-1]
	f.mu.Unlock()
	if got := fmt.Sprint(body["allow_internet_access"], body["network"], body["secure"]); got != "false map[allowOut:[api.example.com pkg.example.org]] true" {
		t.Errorf("NewSandbox carried %s", got)
	}
	ev := s.SandboxID()
	if ev == "" {
		t.Error("no sandbox id")
	}
}

func TestCredentialNeverVisible(t *testing.T) {
	c, f, edge := newClient(t)
	s := create(t, c, "inst-canary", `{"type":"unrestricted"}`)
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"/bin/sh", "-c", "cat"}})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(t, p, []byte("x"))
	for name, v := range map[string]any{"client": c, "sandbox": s, "process": p, "evidence": p.Evidence(), "result": r} {
		if vendortest.Holds(v, canary) {
			t.Errorf("the %s holds the API key", name)
		}
		if strings.Contains(fmt.Sprintf("%+v %#v", v, v), canary) {
			t.Errorf("the %s formats the API key", name)
		}
	}
	// A vendor that echoes the request's headers in an error body: the
	// error must not carry them.
	f.mu.Lock()
	f.echoKey = true
	f.mu.Unlock()
	_, err = c.Create(context.Background(), e2b.SandboxSpec{ID: "inst-echo", Policy: vendortest.Compiled(t, `{"type":"none"}`)})
	if !errors.Is(err, e2b.CodeControlPlaneRefused) {
		t.Fatalf("Create against an echoing vendor = %v, want control_plane_refused", err)
	}
	if strings.Contains(err.Error(), canary) || vendortest.Holds(err, canary) {
		t.Errorf("the error carries the key: %v", err)
	}
	if edge.Sent() < 2 {
		t.Errorf("the edge sent %d requests; the key was never used", edge.Sent())
	}
}

func TestEvidence(t *testing.T) {
	c, _, _ := newClient(t)
	s := create(t, c, "inst-ev", `{"type":"allowlist","allowed_hosts":["api.example.com"]}`)
	p, err := s.OpenProcess(context.Background(), e2b.Command{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, p, nil)
	ev := p.Evidence()
	if ev.Label != checkfu.LabelMock || ev.Grade != checkfu.AdvisoryFilter || ev.GradeReason != e2b.AdvisoryReason {
		t.Errorf("evidence label %s grade %s reason %q", ev.Label, ev.Grade, ev.GradeReason)
	}
	if ev.Instance != "inst-ev" || ev.Provider != e2b.Identity().Provider || ev.NetworkMode != "allowlist" || ev.RootImage != "base" {
		t.Errorf("evidence = %+v", ev)
	}
	if !strings.Contains(strings.Join(ev.Caveats, "\n"), "share one allowOut list") {
		t.Errorf("evidence caveats %q do not state the flattening", ev.Caveats)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	edge := &vendortest.Edge{}
	for name, cfg := range map[string]e2b.Config{
		"no edge":     {Credential: "h", Template: "base"},
		"no handle":   {Edge: edge, Template: "base"},
		"no template": {Edge: edge, Credential: "h"},
		"plain http":  {Edge: edge, Credential: "h", Template: "base", BaseURL: "http://api.e2b.app"},
		"userinfo":    {Edge: edge, Credential: "h", Template: "base", BaseURL: "https://u:p@api.e2b.app"},
	} {
		if _, err := e2b.New(cfg); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: New = %v, want config_invalid", name, err)
		}
	}
	_ = rand.Reader
}

// TestNetworkNoneIsReal: under none, the fake's process has only a
// loopback interface, so it reaches no host listener.
func TestNetworkNoneIsReal(t *testing.T) {
	if !vendortest.IsolationReal {
		t.Skip("no network namespaces on this OS")
	}
	c, _, _ := newClient(t)
	r := run(t, create(t, c, "inst-none", `{"type":"none"}`), nil, "/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
	if string(r.stdout) != "lo\n" {
		t.Errorf("interfaces under none: %q, want only lo", r.stdout)
	}
}
