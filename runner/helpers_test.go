package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/clitest"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestMain makes the test binary the scripted agent when a Runner
// re-executes it in agent mode.
func TestMain(m *testing.M) {
	jail.InitMain() // a jail's init stage is this binary, re-executed
	if os.Getenv(runnertest.AgentEnv) == "1" {
		if os.Getenv(probeEnv) == "1" {
			probeModel()
		}
		os.Exit(runnertest.Main())
	}
	os.Exit(clitest.Run(m))
}

// canary is the provider credential; no byte of it may reach an event,
// the table, or the agent.
const canary = "ghp_RUNNERCANARY0123456789abcdefXYZ"

var (
	cred        = custody.Binding{Namespace: "acme", Integration: "issues", Handle: address.MustParseHandle("ch_bbbbbbbbbbbbbbbbbbbbbbbbba")}
	integration = checkfu.ProviderRevision{Provider: "example:issues", Revision: "1"}
	member      = checkfu.RequestContext{Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Run: "run-1", Release: "checkfu@test"}
)

// tb is the part of testing.TB the helpers need, so that an Example can
// build a rig too.
type tb interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
	TempDir() string
}

// exampleTB is a tb for Examples: Fatal panics, and Cleanup runs at done.
type exampleTB struct{ cleanups []func() }

func (*exampleTB) Helper()            {}
func (*exampleTB) Fatal(args ...any)  { panic(fmt.Sprint(args...)) }
func (e *exampleTB) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) TempDir() string {
	dir, err := os.MkdirTemp("", "checkfu-runner-example-")
	if err != nil {
		panic(err)
	}
	e.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// done runs the cleanups, last first.
func (e *exampleTB) done() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// A rig is a Runner in front of a loopback TLS upstream reached as
// api.example.com, with the canary in custody and both tools assigned to
// the member.
type rig struct {
	*runner.Runner
	dns       *dnstest.Server // resolves api.example.com to the upstream
	hits      atomic.Int64
	approvals atomic.Int64
	// traceparent is the last W3C traceparent header the upstream got.
	traceparent atomic.Value
}

// approveAll approves as user:carol and counts.
func (g *rig) approveAll(_ context.Context, _ runner.ApprovalRequest) (runner.Approval, error) {
	g.approvals.Add(1)
	return runner.Approval{Approve: true, Approver: "user:carol"}, nil
}

// newRig builds a rig; edit may change the Config first.
func newRig(t tb, edit func(*runner.Config, *rig)) *rig {
	t.Helper()
	g := &rig{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		if req.Header.Get("Authorization") != "Bearer "+canary {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		g.hits.Add(1)
		g.traceparent.Store(req.Header.Get("Traceparent"))
		if req.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"created":2}`)
			return
		}
		fmt.Fprint(w, `{"issues":[1]}`)
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	base := "https://api.example.com:" + strconv.Itoa(int(port))
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	g.dns = dns
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	cfg := runner.Config{
		Dir: t.TempDir(),
		Connections: []runner.Connection{{Credential: cred, Provider: integration,
			Rules: []egress.Rule{
				{Host: "api.example.com", Port: port, PathPrefix: "/v1/issues", Methods: []string{"GET"}},
				{Host: "api.example.com", Port: port, PathPrefix: "/v1/issues", Methods: []string{"POST"}, Headers: []string{"Content-Type"}},
			},
			Tools: []authz.Registration{
				{Capability: "issues.list", Operation: "GET", Resource: base + "/v1/issues", Credential: cred, Effect: authz.ReadOnly,
					Tool: authz.ToolDescriptor{Name: "list_issues", InputSchema: json.RawMessage(`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`)}},
				{Capability: "issues.create", Operation: "POST", Resource: base + "/v1/issues", Credential: cred, Effect: authz.ExternalEffect,
					Tool: authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)}},
			}}},
		Assignments: []authz.PermissionAssignment{
			{Actor: member.Actor, Capability: "issues.list", Tenant: member.Tenant, Workspace: member.Workspace, Project: member.Project, ExpiresAt: exp},
			{Actor: member.Actor, Capability: "issues.create", Tenant: member.Tenant, Workspace: member.Workspace, Project: member.Project, ExpiresAt: exp},
		},
		Approver: runner.ApproverFunc(g.approveAll),
		Dialer:   dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	}
	if edit != nil {
		edit(&cfg, g)
	}
	r, err := runner.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.PutCredential(context.Background(), cred, custody.NewSecret([]byte(canary))); err != nil {
		t.Fatal(err)
	}
	g.Runner = r
	return g
}

// session opens the member's session.
func (g *rig) session(t tb) *runner.Session {
	t.Helper()
	tok, err := g.IssueToken(member, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.Open(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// profileDoc is a profile with network policy np.
func profileDoc(np string) []byte {
	return []byte(`{"name": "p", "image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "network_policy": ` + np + `}`)
}

// admitted returns a session admitted under an unrestricted profile in
// the trusted lane.
func (g *rig) admitted(t tb) *runner.Session {
	t.Helper()
	s := g.session(t)
	v, err := s.Publish(context.Background(), profileDoc(`{"type": "unrestricted"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(context.Background(), v, laneTrusted, provenance); err != nil {
		t.Fatal(err)
	}
	return s
}

// agentSpec is the scripted agent playing script.
func agentSpec(t tb, script []runnertest.Step) adapters.ProcessSpec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return adapters.ProcessSpec{Argv: []string{exe}, Env: []string{runnertest.AgentEnv + "=1", runnertest.ScriptArg(script)}}
}

// turn launches the scripted agent with script, plays one turn, closes
// it, and returns what the agent said.
func turn(t tb, s *runner.Session, script []runnertest.Step) []string {
	t.Helper()
	return turnWith(t, s, runner.LaunchConfig{Stderr: os.Stderr}, script)
}

// turnWith is turn with cfg's other fields.
func turnWith(t tb, s *runner.Session, cfg runner.LaunchConfig, script []runnertest.Step) []string {
	t.Helper()
	_, said := launchTurn(t, s, cfg, agentSpec(t, script))
	return said
}

// launchTurn launches ps with cfg's other fields, plays one turn,
// closes the agent, and returns it with what it said.
func launchTurn(t tb, s *runner.Session, cfg runner.LaunchConfig, ps adapters.ProcessSpec) (*runner.Agent, []string) {
	t.Helper()
	ctx := context.Background()
	var said []string
	cfg.Process, cfg.OnUpdate = ps, collect(&said)
	a, err := s.Launch(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return a, said
}

// entries reads the session's log.
func entries(t tb, r *runner.Runner, session string) []eventlog.Entry {
	t.Helper()
	var out []eventlog.Entry
	for e, err := range r.Log().Read(context.Background(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}
