package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// mounter is the process provider dressed as a BrokerMounter, as
// *docker.Provider is: it records whether another local user could
// reach the broker directory it is handed, which is the socket's
// directory on the plane's host.
type mounter struct {
	runner.Provider
	dir       string
	reachable bool
}

func (m *mounter) CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error) {
	m.dir, m.reachable = brokerDir, othersTraverse(brokerDir)
	return m.Create(ctx, spec)
}

func (m *mounter) BrokerPath() string { return m.dir }

// othersTraverse reports whether every directory from / down to dir lets
// other users search it, so that a stranger can reach dir/broker.sock
// (mode 0666) by its path.
func othersTraverse(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// TestBrokerMountedDirectoryPrivate: when the provider mounts the broker
// directory into a container (whose non-root user must traverse it), the
// directory is still unreachable to another local user on the plane's
// host: the socket is 0666, so a traversable path would hand a stranger
// the session's tool calls, under its lease, once the agent's evidence
// matched.
func TestBrokerMountedDirectoryPrivate(t *testing.T) {
	m := &mounter{Provider: runner.Process()}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = m })
	s := g.admitted(t)
	_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: adapters.ProcessSpec{Argv: []string{"/bin/true"}}})
	if err == nil {
		t.Fatal("/bin/true answered initialize")
	}
	if m.dir == "" {
		t.Fatal("CreateWithBroker was not called")
	}
	if m.reachable {
		t.Fatalf("broker directory %s is reachable by every local user", m.dir)
	}
	if fi, err := os.Stat(m.dir); err != nil || fi.Mode().Perm()&0o005 != 0o005 {
		t.Fatalf("broker directory %s: %v, %v; the container's user must traverse it", m.dir, fi.Mode(), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(m.dir)); !os.IsNotExist(err) {
		t.Fatalf("after Close, the broker's private directory is still there: %v", err)
	}
}

// signal is an io.Writer that closes its channel on the first write.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func (s *signal) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.ch) })
	return len(p), nil
}

// TestCloseEndsAStalledHandshake: an agent that never answers initialize
// cannot hold its session open. Session.Close returns at once, kills the
// process and the stalled Launch returns a refusal, even when the
// caller's context has no deadline.
func TestCloseEndsAStalledHandshake(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := &signal{ch: make(chan struct{})}
	launched := make(chan error, 1)
	go func() {
		_, err := s.Launch(ctx, runner.LaunchConfig{
			Process: adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo up >&2; exec sleep 60"}},
			Stderr:  up,
		})
		launched <- err
	}()
	select {
	case <-up.ch:
	case err := <-launched:
		t.Fatalf("Launch returned before the handshake: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the agent never started")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		cancel() // let the stalled Launch, and with it Close, return
		t.Fatal("Session.Close blocked behind an agent that never answers initialize")
	}
	select {
	case err := <-launched:
		if err == nil {
			t.Fatal("the stalled Launch succeeded after Close")
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the stalled Launch did not return after Close")
	}
}

// TestSessionPrintsNoToken: the server-owned token the session was
// opened with is a bearer credential; printing the session (fmt's every
// verb, slog) shows nothing of it.
func TestSessionPrintsNoToken(t *testing.T) {
	g := newRig(t, nil)
	tok, err := g.IssueToken(member, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.Open(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("session", "s", s)
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("session", "s", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), logged.String()} {
		if strings.Contains(out, tok) {
			t.Fatalf("the token is printed: %.200s", out)
		}
	}
}

// keys is a KeySource an embedder might write: a value holding its keys.
type keys struct {
	runner.KeySource
	token []byte
}

func (k keys) Token() ([]byte, error) { return k.token, nil }

// TestRunnerPrintsNoKey: a Runner printed (fmt's every verb, slog) shows
// nothing of the keys its KeySource held; New asks for them once and
// keeps no KeySource.
func TestRunnerPrintsNoKey(t *testing.T) {
	k := keys{KeySource: runner.EphemeralKeys(), token: []byte("0123456789abcdef0123456789abcdef-token-key")}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Keys = k })
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("runner", "r", g.Runner)
	for _, out := range []string{fmt.Sprint(g.Runner), fmt.Sprintf("%+v", g.Runner), fmt.Sprintf("%#v", g.Runner), logged.String()} {
		if strings.Contains(out, fmt.Sprint(k.token)) || strings.Contains(out, fmt.Sprintf("%#v", k.token)) {
			t.Fatalf("the token key is printed: %.300s", out)
		}
	}
}

// TestCloseEndsATurnThatNeverEnds: a turn the agent never ends (here it
// waits on a permission request the Approver never answers) does not
// outlive its session: Session.Close ends the process, the Approver's
// context is cancelled, and Prompt returns an error, even when the
// caller's context has no deadline.
func TestCloseEndsATurnThatNeverEnds(t *testing.T) {
	asked := make(chan struct{})
	var once sync.Once
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Approver = runner.ApproverFunc(func(ctx context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
			once.Do(func() { close(asked) })
			<-ctx.Done()
			return runner.Approval{}, ctx.Err()
		})
	})
	s := g.admitted(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan error, 1)
	go func() {
		_, err := a.Prompt(ctx, "go")
		prompted <- err
	}()
	select {
	case <-asked:
	case err := <-prompted:
		t.Fatalf("the turn ended before the Approver was asked: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the Approver was never asked")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for _, ch := range []chan error{closed, prompted} {
		select {
		case err := <-ch:
			if ch == prompted && err == nil {
				t.Fatal("the turn succeeded after Session.Close")
			}
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatal("Session.Close did not end the turn")
		}
	}
	// The turn's end and the process's are in the log all the same, once
	// each and in that order (the Approver's own refusal, which ends
	// when Close cancels it, may land anywhere around them).
	var ends []row
	for _, r := range rows(entries(t, g.Runner, member.Session)) {
		if r.Kind == eventlog.KindTurnEnded || r.Kind == eventlog.KindProcessExited {
			ends = append(ends, r)
		}
	}
	want := []row{{eventlog.KindTurnEnded, eventlog.DecisionNone, "", "closed"}, {eventlog.KindProcessExited, eventlog.DecisionNone, "", "killed"}}
	if !slices.Equal(ends, want) {
		t.Fatalf("the log's ends %v, want %v", ends, want)
	}
}

// TestNewRefusesToolNameTwice: a permission request names its tool by
// name, and the broker serves one tool per name, so two registrations
// under one tool name would let the approval bind one capability while
// the call reaches another. New refuses the ambiguity.
func TestNewRefusesToolNameTwice(t *testing.T) {
	rule := []egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1", Methods: []string{"POST"}}}
	tool := func(capability string, effect authz.Effect) authz.Registration {
		return authz.Registration{Capability: capability, Operation: "POST", Resource: "https://api.example.com/v1/" + capability, Credential: cred, Effect: effect,
			Tool: authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	_, err := runner.New(context.Background(), runner.Config{Dir: t.TempDir(), Connections: []runner.Connection{{
		Credential: cred, Provider: integration, Rules: rule,
		Tools: []authz.Registration{tool("issues.create", authz.ExternalEffect), tool("issues.delete", authz.ExternalEffect)},
	}}})
	if !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("New = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// TestSecondLaunchWhileServingIsTyped: a Launch while the session's
// broker still serves its first agent is refused with a typed code, and
// logged with it, not with a bare socket error; the first agent keeps
// its turn.
func TestSecondLaunchWhileServingIsTyped(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	ctx := context.Background()
	script := []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}}
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, script)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, script)})
	var ref *checkfu.Refusal
	if !errors.As(err, &ref) || !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("second Launch = %v, want a refusal with %s", err, checkfu.CodeConfigInvalid)
	}
	es := entries(t, g.Runner, s.ID())
	if last := es[len(es)-1]; last.Decision != eventlog.DecisionDeny || last.Code != string(checkfu.CodeConfigInvalid) {
		t.Fatalf("last event %s %s %q, want a denial with %s", last.Kind, last.Decision, last.Code, checkfu.CodeConfigInvalid)
	}
	if _, err := a.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if g.hits.Load() != 1 {
		t.Fatalf("upstream hits = %d, want 1", g.hits.Load())
	}
}

// TestAgentCloseOutlivesAChildHoldingItsPipes: an agent that exits at the
// end of its input but leaves a child holding its stdout and stderr
// cannot hold Agent.Close: it returns within twice ExitGrace, not when
// the child chooses to exit.
func TestAgentCloseOutlivesAChildHoldingItsPipes(t *testing.T) {
	// Where the provider runs the agent in a PID namespace of its own, the
	// kernel kills the child with the agent and the pipes close anyway;
	// heldStderr keeps stderr open as a provider without one would.
	held := make(chan struct{})
	t.Cleanup(func() { close(held) })
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = heldStderr{runner.Process(), held} })
	s := g.admitted(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	spec := agentSpec(t, nil)
	// The child's pid as the host sees it (the agent may be pid 1 of a
	// PID namespace of its own, while /proc is the host's).
	spec.Argv = append([]string{"/bin/sh", "-c", `(read pid _ < /proc/self/stat; echo $pid > ` + pidFile + `; exec sleep 120) & exec "$0"`}, spec.Argv...)
	a, err := s.Launch(context.Background(), runner.LaunchConfig{Process: spec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // where the process provider has no PID namespace, the child outlives its group's leader
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	done := make(chan error, 1)
	go func() { done <- a.Close(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2*runner.ExitGrace + 5*time.Second):
		t.Fatal("Agent.Close waits for a child holding the agent's pipes")
	}
}

// heldStderr is a provider whose processes' stderr does not end until
// held is closed: a child left holding the pipe, on a provider that does
// not kill it with the agent.
type heldStderr struct {
	runner.Provider
	held <-chan struct{}
}

func (h heldStderr) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := h.Provider.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return heldStderrInstance{inst, h.held}, nil
}

type heldStderrInstance struct {
	adapters.Instance
	held <-chan struct{}
}

func (i heldStderrInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.Instance.OpenProcess(ctx, spec)
	if err != nil {
		return nil, err
	}
	return heldStderrProcess{p, io.MultiReader(p.Stderr(), blockUntil(i.held))}, nil
}

type heldStderrProcess struct {
	adapters.Process
	stderr io.Reader
}

func (p heldStderrProcess) Stderr() io.Reader { return p.stderr }

// blockUntil is a reader that blocks until done is closed, then ends.
type blockUntil <-chan struct{}

func (b blockUntil) Read([]byte) (int, error) {
	<-b
	return 0, io.EOF
}

// undying is the process provider with an instance whose Destroy fails
// and kills nothing, as a hostile or broken remote provider's may. The
// test's cleanup destroys the real instance, which would otherwise leave
// its directory behind.
type undying struct {
	runner.Provider
	t *testing.T
}

func (u undying) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := u.Provider.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	u.t.Cleanup(func() { inst.Destroy(context.Background()) })
	return undyingInstance{inst}, nil
}

type undyingInstance struct{ adapters.Instance }

func (undyingInstance) Destroy(context.Context) error { return errors.New("provider: destroy failed") }

// TestClosedSessionAsksNoApproval: once Session.Close has run, an agent
// its provider failed to end cannot get the Approver asked: Close ended
// its ACP client, so nothing it sends is read.
func TestClosedSessionAsksNoApproval(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = undying{runner.Process(), t} })
	s := g.admitted(t)
	ctx := context.Background()
	var once sync.Once
	a, err := s.Launch(ctx, runner.LaunchConfig{
		Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "late"}, Ask: true}}),
		// The agent says "tools/list -> ..." before it asks: the session
		// is closed in between, on the client's read goroutine.
		OnUpdate: func(acp.SessionNotification) { once.Do(func() { s.Close() }) },
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Prompt(ctx, "go") // it fails: Close ended the client
	a.Close(ctx)
	if n := g.approvals.Load(); n != 0 {
		t.Fatalf("the Approver was asked %d times after Session.Close", n)
	}
}

// TestCloseEndsTheAgentsItLaunched: Session.Close ends the session's
// agents itself, not only through the instance's Destroy: when Destroy
// fails and kills nothing, the agent's turn still ends with an error and
// its process is killed (checked by its pid).
func TestCloseEndsTheAgentsItLaunched(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = undying{runner.Process(), t} })
	s := g.admitted(t)
	ctx := context.Background()
	pidFile := filepath.Join(t.TempDir(), "pid")
	spec := agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "late"}, Ask: true}})
	// The pid as the host sees it: the process provider may run the agent
	// as pid 1 of a PID namespace of its own, while /proc is the host's.
	spec.Argv = append([]string{"/bin/sh", "-c", `read pid _ < /proc/self/stat; echo $pid > ` + pidFile + `; exec "$0"`}, spec.Argv...)
	var once sync.Once
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: spec,
		OnUpdate: func(acp.SessionNotification) { once.Do(func() { s.Close() }) }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid %q: %v", b, err)
	}
	t.Cleanup(func() { a.Close(ctx) })
	if _, err := a.Prompt(ctx, "go"); err == nil {
		t.Fatal("the agent's turn went on after Session.Close")
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("agent process %d alive 10 s after Session.Close", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDefaultStoresPrivate: the default SQLite stores are created 0600
// (and SQLite gives their -wal and -shm files the same mode), so a
// Config.Dir other users may list still hands none of them the log's
// envelopes or custody's ciphertext.
func TestDefaultStoresPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Dir = dir })
	g.admitted(t) // writes to both stores
	files, err := filepath.Glob(filepath.Join(dir, "*.db*"))
	if err != nil || len(files) < 2 {
		t.Fatalf("stores in %s: %v, %v", dir, files, err)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want no access for group or others", filepath.Base(f), fi.Mode().Perm())
		}
	}
}

// TestPermissionWithoutAssignmentAsksNoOne: an agent cannot make the
// Approver (a person) decide an action its actor holds no permission
// assignment for: the gateway would refuse the call anyway, so the
// request is denied with permission_missing, logged, and nobody is asked.
func TestPermissionWithoutAssignmentAsksNoOne(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Assignments = c.Assignments[:1] }) // issues.list only
	s := g.admitted(t)
	turn(t, s, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "t"}, Ask: true}})
	if n := g.approvals.Load(); n != 0 {
		t.Fatalf("the Approver was asked %d times for an action the actor may not make", n)
	}
	var denied bool
	for _, e := range entries(t, g.Runner, s.ID()) {
		denied = denied || e.Result == "refused_permission" && e.Code == string(authz.CodePermissionMissing)
	}
	if !denied {
		t.Fatal("no refused_permission denial with permission_missing in the log")
	}
}

// stubbornProvider is a hostile remote provider's instance, played over
// the process provider: it reports evidence for another profile (so the
// Runner must kill the process), ignores Kill, never reports an exit and
// never finishes a Destroy. Release ends the real process.
type stubbornProvider struct {
	runner.Provider
	release chan struct{}
	inner   chan adapters.Instance
}

func (p stubbornProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := p.Provider.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	p.inner <- inst
	return stubbornInstance{inst, p.release}, nil
}

type stubbornInstance struct {
	adapters.Instance
	release chan struct{}
}

func (i stubbornInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.Instance.OpenProcess(ctx, spec)
	if err != nil {
		return nil, err
	}
	return stubbornProcess{lyingProcess{p}, i.release}, nil
}

func (i stubbornInstance) Destroy(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-i.release:
		return nil
	}
}

type stubbornProcess struct {
	lyingProcess
	release chan struct{}
}

func (stubbornProcess) Kill() error { return nil }

func (p stubbornProcess) Wait() (int, error) {
	<-p.release
	p.lyingProcess.Kill()
	return p.lyingProcess.Wait()
}

// TestStubbornProviderCannotHoldTheSession: a remote provider that
// ignores Kill, never reports the exit and never finishes Destroy cannot
// hold Launch (which must kill a mismatching process) or Session.Close:
// each gives up after ExitGrace.
func TestStubbornProviderCannotHoldTheSession(t *testing.T) {
	p := stubbornProvider{Provider: runner.Process(), release: make(chan struct{}), inner: make(chan adapters.Instance, 1)}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = p })
	s := g.admitted(t)
	t.Cleanup(func() {
		close(p.release)
		select {
		case inst := <-p.inner:
			inst.Destroy(context.Background())
		default:
		}
	})
	bound := 2*runner.ExitGrace + 5*time.Second
	launched := make(chan error, 1)
	go func() {
		_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, nil)})
		launched <- err
	}()
	select {
	case err := <-launched:
		if !errors.Is(err, adapters.CodeEvidenceMismatch) {
			t.Fatalf("Launch = %v, want %s", err, adapters.CodeEvidenceMismatch)
		}
	case <-time.After(bound):
		t.Fatal("Launch waits for a process its provider never reports ended")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatal("Session.Close waits for a Destroy that never ends")
	}
}
