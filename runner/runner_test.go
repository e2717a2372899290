package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

var (
	laneTrusted = admission.LaneTrusted
	provenance  = admission.Provenance{Actor: "user:alice", Role: "admin"}
)

// collect returns an OnUpdate that appends every agent_message_chunk's
// text to said.
func collect(said *[]string) func(acp.SessionNotification) {
	var mu sync.Mutex
	return func(n acp.SessionNotification) {
		var u struct {
			Content struct{ Text string } `json:"content"`
		}
		if n.Kind() == "agent_message_chunk" && json.Unmarshal(n.Update, &u) == nil {
			mu.Lock()
			*said = append(*said, u.Content.Text)
			mu.Unlock()
		}
	}
}

// row is the part of an entry the tests compare.
type row struct {
	Kind     eventlog.Kind
	Decision eventlog.Decision
	Code     string
	Result   string
}

func rows(es []eventlog.Entry) []row {
	var out []row
	for _, e := range es {
		out = append(out, row{e.Kind, e.Decision, e.Code, e.Result})
	}
	return out
}

// TestSessionWholePath runs the quickstart's script through every step
// and checks the log: each decision, in order, with the request context
// on every event, and no byte of the credential anywhere.
func TestSessionWholePath(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	said := turn(t, s, runnertest.QuickstartScript)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := []row{
		{eventlog.KindAdmission, eventlog.DecisionAllow, "", "published"},
		{eventlog.KindAdmission, eventlog.DecisionAllow, "", "admitted"},
		{eventlog.KindProcessStarted, eventlog.DecisionAllow, "", "isolation_checked"},
		{eventlog.KindToolCall, eventlog.DecisionAllow, "", "authorized"},
		{eventlog.KindToolCall, eventlog.DecisionNone, "", "http_200"},
		{eventlog.KindDenial, eventlog.DecisionDeny, string(authz.CodeArgumentsInvalid), "refused"},
		{eventlog.KindApprovalDecision, eventlog.DecisionAllow, "", "approved"},
		{eventlog.KindToolCall, eventlog.DecisionAllow, "", "authorized"},
		{eventlog.KindApprovalResult, eventlog.DecisionNone, "", "succeeded"},
		{eventlog.KindToolCall, eventlog.DecisionNone, "", "http_201"},
		{eventlog.KindTurnEnded, eventlog.DecisionNone, "", "end_turn"},
		{eventlog.KindProcessExited, eventlog.DecisionNone, "", "exit_0"},
	}
	es := entries(t, g.Runner, member.Session)
	if got := rows(es); !slices.Equal(got, want) {
		t.Fatalf("log:\n%v\nwant:\n%v\nagent said %q", got, want, said)
	}
	for _, e := range es {
		got := checkfu.RequestContext{Actor: e.Actor, Role: e.Role, Tenant: e.Tenant, Workspace: e.Workspace,
			Project: e.Project, Session: e.SessionID, Request: e.RequestID, Run: e.RunID, Release: member.Release}
		if got != member {
			t.Errorf("seq %d carries context %+v, want %+v", e.Seq, got, member)
		}
	}
	if g.hits.Load() != 2 || g.approvals.Load() != 1 {
		t.Errorf("upstream hits %d, approvals %d; want 2 and 1", g.hits.Load(), g.approvals.Load())
	}
	var table bytes.Buffer
	if err := s.WriteLog(context.Background(), &table); err != nil {
		t.Fatal(err)
	}
	dump, _ := json.Marshal(es)
	for what, b := range map[string]string{"table": table.String(), "entries": string(dump), "agent": strings.Join(said, "\n")} {
		if strings.Contains(b, canary) || strings.Contains(b, canary[4:20]) {
			t.Errorf("the %s holds the credential", what)
		}
	}
	if head, err := s.Verify(context.Background()); err != nil || head.Seq != uint64(len(want)) {
		t.Errorf("Verify = %v, %v", head, err)
	}
}

// TestOpenRefusesForeignToken: only a token under the Runner's token key
// opens a session.
func TestOpenRefusesForeignToken(t *testing.T) {
	g := newRig(t, nil)
	other := newRig(t, nil)
	tok, err := other.IssueToken(member, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Open(context.Background(), tok); !errors.Is(err, gateway.CodeTokenInvalid) {
		t.Fatalf("Open(foreign token) = %v, want %s", err, gateway.CodeTokenInvalid)
	}
	// The refusal leaves a trace in the plane log, with no context and
	// nothing of the token.
	es := entries(t, g.Runner, runner.PlaneSession)
	if len(es) != 1 {
		t.Fatalf("plane log holds %d events, want 1", len(es))
	}
	e := es[0].Event
	if e.Kind != eventlog.KindDenial || e.Decision != eventlog.DecisionDeny || e.Code != string(gateway.CodeTokenInvalid) {
		t.Errorf("plane event %v %v %q, want a denial with %s", e.Kind, e.Decision, e.Code, gateway.CodeTokenInvalid)
	}
	if e.Actor != "" || e.Tenant != "" || e.Workspace != "" || e.SessionID != "" || e.RequestID != "" {
		t.Errorf("plane event carries a context nobody authenticated: %+v", e)
	}
	dump, _ := json.Marshal(es)
	if strings.Contains(string(dump), tok) || strings.Contains(string(dump), tok[len(tok)-16:]) {
		t.Error("the plane log holds the token")
	}
}

// TestRefusedOpensAreNotBounded shows a limit SECURITY.md states (asset
// 13): refused Runner.Open calls are neither paced, coalesced nor
// budgeted as an agent's refusals are. The caller is the application
// server, not the sandbox; each refused Open, identical or not, is one
// denial in the plane log. If they become bounded, this test and the
// limit change together.
func TestRefusedOpensAreNotBounded(t *testing.T) {
	g := newRig(t, nil)
	other := newRig(t, nil)
	tok, err := other.IssueToken(member, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const n = runner.MaxRefusals + 4 // past an agent's burst and budget
	for range n {
		if _, err := g.Open(context.Background(), tok); !errors.Is(err, gateway.CodeTokenInvalid) {
			t.Fatalf("Open(foreign token) = %v, want %s", err, gateway.CodeTokenInvalid)
		}
	}
	es := entries(t, g.Runner, runner.PlaneSession)
	if len(es) != n {
		t.Fatalf("plane log holds %d events for %d identical refused Opens, want one each", len(es), n)
	}
	for _, e := range es {
		if e.Result != es[0].Result || strings.Contains(e.Result, "_repeated_") {
			t.Fatalf("a refused Open was coalesced: %q", e.Result)
		}
	}
}

// TestAdmitRefusalIsLogged: an allowlist profile cannot run on the
// process provider (grade unsupported); the refusal keeps admission's
// code, is logged as a deny, and the session can admit another version.
func TestAdmitRefusalIsLogged(t *testing.T) {
	g := newRig(t, nil)
	s := g.session(t)
	ctx := context.Background()
	v, err := s.Publish(ctx, profileDoc(`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Admit(ctx, v, laneTrusted, provenance)
	if !errors.Is(err, admission.CodeProviderUnavailable) {
		t.Fatalf("Admit(allowlist) = %v, want %s", err, admission.CodeProviderUnavailable)
	}
	if _, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, nil)}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Launch after a refused Admit = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	if _, err := s.Publish(ctx, []byte(`{"name": 1}`), nil); !errors.Is(err, admission.CodeProfileInvalid) {
		t.Fatalf("Publish(bad) = %v, want %s", err, admission.CodeProfileInvalid)
	}
	want := []row{
		{eventlog.KindAdmission, eventlog.DecisionAllow, "", "published"},
		{eventlog.KindAdmission, eventlog.DecisionDeny, string(admission.CodeProviderUnavailable), "refused"},
		{eventlog.KindAdmission, eventlog.DecisionDeny, string(admission.CodeProfileInvalid), "refused"},
	}
	if got := rows(entries(t, g.Runner, member.Session)); !slices.Equal(got, want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	if s.Record() != nil {
		t.Fatal("a refused session has a record")
	}
}

// TestAdversarialLaneRefused: the process provider enforces nothing, so
// a session with missing provenance (adversarial) never runs on it.
func TestAdversarialLaneRefused(t *testing.T) {
	g := newRig(t, nil)
	s := g.session(t)
	v, err := s.Publish(context.Background(), profileDoc(`{"type": "unrestricted"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(context.Background(), v, admission.LaneTrusted, admission.Provenance{}); !errors.Is(err, admission.CodeProviderUnavailable) {
		t.Fatalf("Admit(trusted without provenance) = %v, want %s", err, admission.CodeProviderUnavailable)
	}
}

// lyingProvider reports evidence for another profile digest than the one
// its instance was created for.
type lyingProvider struct{ runner.Provider }

func (p lyingProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := p.Provider.Create(ctx, spec)
	return lyingInstance{inst}, err
}

type lyingInstance struct{ adapters.Instance }

func (i lyingInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.Instance.OpenProcess(ctx, spec)
	return lyingProcess{p}, err
}

type lyingProcess struct{ adapters.Process }

func (p lyingProcess) Evidence() adapters.Evidence {
	ev := p.Process.Evidence()
	ev.ProfileDigest = "sha256:" + strings.Repeat("e", 64)
	return ev
}

// TestEvidenceMismatchRefused: a process whose evidence does not match
// the state the Runner holds is refused, logged and never spoken to.
func TestEvidenceMismatchRefused(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = lyingProvider{runner.Process()} })
	s := g.admitted(t)
	_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript)})
	if !errors.Is(err, adapters.CodeEvidenceMismatch) {
		t.Fatalf("Launch = %v, want %s", err, adapters.CodeEvidenceMismatch)
	}
	es := entries(t, g.Runner, member.Session)
	started, ended := es[len(es)-2], es[len(es)-1]
	if started.Kind != eventlog.KindProcessStarted || started.Decision != eventlog.DecisionDeny || started.Code != string(adapters.CodeEvidenceMismatch) {
		t.Fatalf("last events %v", rows(es[len(es)-2:]))
	}
	// The killed process's end is in the log too.
	if ended.Kind != eventlog.KindProcessExited || ended.Result != "killed" {
		t.Fatalf("last events %v", rows(es[len(es)-2:]))
	}
	if g.hits.Load() != 0 {
		t.Fatal("a refused process reached the upstream")
	}
}

// signalWriter closes seen the first time a write holds want.
type signalWriter struct {
	mu   sync.Mutex
	want string
	buf  strings.Builder
	seen chan struct{}
}

func (w *signalWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(b), nil
}

// waitingProcess is a lyingProcess whose evidence is reported only once
// the agent has had its chance: when its call was answered, or after a
// second of nothing.
type waitingProcess struct {
	lyingProcess
	answered <-chan struct{}
}

func (p waitingProcess) Evidence() adapters.Evidence {
	select {
	case <-p.answered:
	case <-time.After(time.Second):
	}
	return p.lyingProcess.Evidence()
}

type waitingProvider struct {
	runner.Provider
	answered <-chan struct{}
}

func (p waitingProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := p.Provider.Create(ctx, spec)
	return waitingInstance{inst, p.answered}, err
}

type waitingInstance struct {
	adapters.Instance
	answered <-chan struct{}
}

func (i waitingInstance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.Instance.OpenProcess(ctx, spec)
	return waitingProcess{lyingProcess{p}, i.answered}, err
}

// TestUnmatchedProcessIsNeverServed: a process that calls a tool the
// moment it starts, before its evidence is checked, gets no answer: the
// broker serves a process only once its evidence matched, and a mismatch
// closes the session's channel.
func TestUnmatchedProcessIsNeverServed(t *testing.T) {
	stderr := &signalWriter{want: "eager: called", seen: make(chan struct{})}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = waitingProvider{runner.Process(), stderr.seen} })
	s := g.admitted(t)
	spec := agentSpec(t, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}})
	spec.Env = append(spec.Env, runnertest.EagerEnv+"=1")
	_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: spec, Stderr: stderr})
	if !errors.Is(err, adapters.CodeEvidenceMismatch) {
		t.Fatalf("Launch = %v, want %s", err, adapters.CodeEvidenceMismatch)
	}
	if g.hits.Load() != 0 {
		t.Fatalf("an unchecked process reached the upstream %d times", g.hits.Load())
	}
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindToolCall {
			t.Fatalf("an unchecked process's call was decided: %v", rows([]eventlog.Entry{e}))
		}
	}
}

// TestPermissionUnbound: a permission request that names a read-only
// tool, an unknown tool, or arguments the tool refuses binds no action:
// it is denied and logged, and the Approver is never asked.
func TestPermissionUnbound(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	said := turn(t, s, []runnertest.Step{
		{Tool: "list_issues", Arguments: map[string]any{"state": 7}, Ask: true},
		{Tool: "delete_repo", Arguments: map[string]any{}, Ask: true},
		{Tool: "create_issue", Arguments: map[string]any{"title": 7}, Ask: true},
	})
	if g.approvals.Load() != 0 || g.hits.Load() != 0 {
		t.Fatalf("approver asked %d times, upstream hit %d times; agent said %q", g.approvals.Load(), g.hits.Load(), said)
	}
	// Identical refusals are coalesced: one record, then one count.
	var denied int
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindDenial && e.Code == string(runner.CodePermissionUnbound) {
			denied += repeats(e.Result)
		}
	}
	if denied != 3 {
		t.Fatalf("%d permission_unbound denials, want 3; agent said %q", denied, said)
	}
}

// TestPermissionReadOnlyAllowed: a permission request for a read_only
// tool of the profile with arguments it accepts is allowed without the
// Approver, logged as a skipped approval, and the call then goes through
// the gateway.
func TestPermissionReadOnlyAllowed(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	said := turn(t, s, []runnertest.Step{
		{Tool: "list_issues", Arguments: map[string]any{"state": "open"}, Ask: true},
	})
	if g.approvals.Load() != 0 {
		t.Fatalf("approver asked %d times; agent said %q", g.approvals.Load(), said)
	}
	if slices.Contains(said, "[scripted] list_issues -> not permitted by the client") {
		t.Fatalf("read_only permission refused; agent said %q", said)
	}
	var skipped bool
	for _, e := range entries(t, g.Runner, member.Session) {
		skipped = skipped || (e.Kind == eventlog.KindSkip && e.Result == runner.ResultReadOnlyPermission && e.Decision == eventlog.DecisionAllow)
	}
	if !skipped {
		t.Fatalf("no read_only permission entry in the log; agent said %q", said)
	}
}

// TestApproverDeclines: a declined external effect is recorded as a
// denied decision, the agent is told no, and the call it makes anyway is
// refused by the gateway before the upstream.
func TestApproverDeclines(t *testing.T) {
	g := newRig(t, func(c *runner.Config, g *rig) {
		c.Approver = runner.ApproverFunc(func(context.Context, runner.ApprovalRequest) (runner.Approval, error) {
			g.approvals.Add(1)
			return runner.Approval{Approve: false, Approver: "user:carol"}, nil
		})
	})
	s := g.admitted(t)
	said := turn(t, s, []runnertest.Step{
		{Tool: "create_issue", Arguments: map[string]any{"title": "x"}, Ask: true},
		{Tool: "create_issue", Arguments: map[string]any{"title": "x"}},
	})
	if !slices.Contains(said, "[scripted] create_issue -> not permitted by the client") {
		t.Errorf("agent said %q", said)
	}
	if !slices.Contains(said, "[scripted] create_issue -> refused: "+string(authz.CodeApprovalRequired)) {
		t.Errorf("agent said %q", said)
	}
	if g.hits.Load() != 0 || g.approvals.Load() != 1 {
		t.Fatalf("upstream hits %d, approvals asked %d", g.hits.Load(), g.approvals.Load())
	}
	var declined bool
	for _, e := range entries(t, g.Runner, member.Session) {
		declined = declined || (e.Kind == eventlog.KindApprovalDecision && e.Decision == eventlog.DecisionDeny)
	}
	if !declined {
		t.Fatal("no denied approval decision in the log")
	}
}

// TestNoApproverDeniesEffects: without an Approver every permission
// request is denied (approval_denied), logged, and nothing is approved.
func TestNoApproverDeniesEffects(t *testing.T) {
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Approver = nil })
	s := g.admitted(t)
	said := turn(t, s, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": "x"}, Ask: true}})
	if !slices.Contains(said, "[scripted] create_issue -> not permitted by the client") {
		t.Errorf("agent said %q", said)
	}
	es := entries(t, g.Runner, member.Session)
	if e := es[len(es)-3]; e.Kind != eventlog.KindDenial || e.Code != string(authz.CodeApprovalDenied) {
		t.Fatalf("events %v", rows(es))
	}
}

// TestRemoteProviderNeedsEnrollment: the Runner signs a materialization
// statement only for a provider placed in-process.
func TestRemoteProviderNeedsEnrollment(t *testing.T) {
	_, err := runner.New(context.Background(), runner.Config{Dir: t.TempDir(), Provider: remote{}})
	if !errors.Is(err, runner.CodeProviderUnenrolled) {
		t.Fatalf("New(remote provider) = %v, want %s", err, runner.CodeProviderUnenrolled)
	}
}

// remote is the process provider across acp/wire.
type remote struct{ process.Remote }

func (remote) Spec(id, digest string) adapters.InstanceSpec { return process.Spec(id, digest) }

// TestNewRefusesBadConfig: a Config that cannot work is refused.
func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]runner.Config{
		"no dir":    {},
		"bad label": {Dir: t.TempDir(), Label: checkfu.Label(9)},
		"two providers": {Dir: t.TempDir(), Connections: []runner.Connection{
			{Credential: cred, Provider: integration, Rules: []egress.Rule{{Host: "a.example.com", Port: 443, Methods: []string{"GET"}}}},
			{Credential: cred, Provider: checkfu.ProviderRevision{Provider: "other", Revision: "1"}, Rules: []egress.Rule{{Host: "a.example.com", Port: 443, Methods: []string{"GET"}}}},
		}},
	} {
		if _, err := runner.New(context.Background(), cfg); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: New = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
}

// TestAdmitAfterLaunchRefused: a launched session keeps its admission;
// a later Admit is refused before anything is decided or logged.
func TestAdmitAfterLaunchRefused(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	turn(t, s, nil)
	before := len(entries(t, g.Runner, member.Session))
	v, err := s.Publish(context.Background(), profileDoc(`{"type": "unrestricted"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(context.Background(), v, laneTrusted, provenance); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Admit after Launch = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	if got := len(entries(t, g.Runner, member.Session)); got != before+1 {
		t.Fatalf("%d events after Publish and the refused Admit, want %d (the publication only)", got, before+1)
	}
}

// TestBrokerDirectoryPrivate: for a provider whose processes run on the
// host as the plane's user, the broker's directory is 0700, so no other
// local user can reach the session's socket.
func TestBrokerDirectoryPrivate(t *testing.T) {
	g := newRig(t, nil)
	s := g.admitted(t)
	var stderr strings.Builder
	_, err := s.Launch(context.Background(), runner.LaunchConfig{
		Process: adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", `stat -c %a "${` + runner.BrokerSocketEnv + `%/*}" >&2`}},
		Stderr:  &stderr,
	})
	if err == nil {
		t.Fatal("a shell answered initialize")
	}
	if got := strings.TrimSpace(stderr.String()); got != "700" {
		t.Fatalf("broker directory mode %q, want 700", got)
	}
}
