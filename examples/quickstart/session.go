package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
	"github.com/checkfu/checkfu/eventlog/pglog"
	"github.com/checkfu/checkfu/internal/strictjson"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

type options struct {
	provider string
	store    string
	terminal bool
	dir      string // where the SQLite stores go; empty means a new temporary directory
	keep     bool   // keep what the run created
	// namePrefix is the docker adapter's name prefix; empty means its
	// default.
	namePrefix string
	// agent is the harness entry of step 7's real agent, and agentsDir
	// where the pinned agents are installed (agentsDirEnv); empty skips
	// step 7 with a line that says how to enable it.
	agent, agentsDir string
}

// The session's request context, as the application server resolved it;
// run gives each run a session id of its own, so that a PostgreSQL log
// kept between runs holds one session per run.
var member = checkfu.RequestContext{
	Actor: "user:alice", Role: "member", Tenant: "acme", Workspace: "ws-1", Project: "app",
	Request: "req-1", Run: "run-1", Release: "quickstart@v1",
}

// The credential's custody binding and the upstream's provider revision.
var (
	credential  = custody.Binding{Namespace: "acme", Integration: "issues", Handle: address.MustParseHandle("ch_qqqqqqqqqqqqqqqqqqqqqqqqqq")}
	integration = checkfu.ProviderRevision{Provider: "example:issues", Revision: "1"}
)

const listSchema = `{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`
const createSchema = `{"type":"object","properties":{"title":{"type":"string","maxLength":64}},"required":["title"],"additionalProperties":false}`

// profile returns a SandboxProfile document with the members extra and
// network policy np.
func profile(extra, np string) []byte {
	return []byte(`{"name": "quickstart", "image": {"ref": "docker.io/library/busybox:1.37", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 256}, ` + extra + `"network_policy": ` + np + `}`)
}

// run runs the session and prints it to w.
func run(ctx context.Context, o options, w io.Writer) error {
	began := time.Now()
	p := &progress{w: w, terminal: o.terminal, of: 9}
	fmt.Fprintln(w, "checkfu quickstart: one session, every decision logged")

	// The platform's side: a local upstream and its credential.
	secret := make([]byte, 24)
	rand.Read(secret)
	credentialText := "qs_" + hex.EncodeToString(secret)
	up, err := startUpstream(credentialText)
	if err != nil {
		return err
	}
	defer up.close()
	fmt.Fprintf(w, "upstream: %s (httptest TLS on 127.0.0.1; the edge treats 127.0.0.1/32 as public with the testing-only egress.DialerConfig.TreatAsPublicForTesting)\n", up.base)
	// Step 7's real agent, when it is installed, and its model: a mock.
	rand.Read(secret)
	modelKey := "qs_model_" + hex.EncodeToString(secret)
	agent, skip := findAgent(o)
	var mm *mockModel
	if agent != nil {
		mm = startModel(agent, modelKey)
		defer mm.srv.Close()
	}
	cfg, stop, err := config(ctx, o, w, p, up, agent, mm)
	if err != nil {
		return err
	}
	defer stop()
	r, err := runner.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.PutCredential(ctx, credential, custody.NewSecret([]byte(credentialText))); err != nil {
		return err
	}
	if mm != nil {
		if err := r.PutCredential(ctx, modelCredential, custody.NewSecret([]byte(modelKey))); err != nil {
			return err
		}
	}

	s, err := openSession(ctx, r, "qs-")
	if err != nil {
		return err
	}
	defer s.Close()
	pmHost, err := admit(ctx, p, r.Description(), s)
	if err != nil {
		return err
	}
	if err := converse(ctx, o, p, r.Description(), s, credentialText); err != nil {
		return err
	}
	p.step("a real coding agent through the door (its model a mock)")
	if agent == nil {
		p.done(skip)
	} else if err := realTurn(ctx, p, s, r.Description().Identity.Provider == jail.Name, agent, mm, up, []string{credentialText, modelKey}); err != nil {
		return err
	}
	if err := allowlistStep(ctx, o, p, r.Description(), cfg.Dir, up, pmHost); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	p.step("the session's event log")
	p.done("")
	var logText bytes.Buffer
	if err := s.WriteLog(ctx, io.MultiWriter(w, &logText)); err != nil {
		return err
	}
	if holds(logText.Bytes(), credentialText) || holds(logText.Bytes(), modelKey) {
		return errors.New("quickstart: the credential or the model key is in the session's event log")
	}
	head, err := s.Verify(ctx)
	if err != nil {
		return fmt.Errorf("chain NOT verified: %w", err)
	}
	fmt.Fprintf(w, "chain verified: %d events, head %x\n", head.Seq, head.Hash[:8])
	if path := r.LogPath(); path != "" && o.dir == "" && !o.keep {
		fmt.Fprintf(w, "log: %s (SQLite; removed at exit: pass -keep to keep it and verify it again with go run ./cmd/checkfu log verify)\n", path)
	} else if path != "" {
		fmt.Fprintf(w, "log: %s (SQLite; verify it again with: go run ./cmd/checkfu log verify -store sqlite:%s -session %s)\n", path, path, s.ID())
	} else {
		fmt.Fprintln(w, "log: PostgreSQL, session", s.ID())
	}
	fmt.Fprintf(w, "upstream saw %d credentialed requests; the agent never saw the credential (checked: none of its messages, nor the log, holds it)\n", up.hits.Load())
	fmt.Fprintf(w, "done in %s\n", time.Since(began).Round(time.Millisecond))
	return nil
}

// config returns the Runner's configuration: the provider -provider
// names (a jail binding agent's install directory, when agent is set),
// the Connection with its two egress rules and two tools (and, with mm,
// the model route's Connection to the mock model), the
// member's permission assignments, an approver that approves and says
// so, the upstream's test-only dialer and roots, and the log store.
func config(ctx context.Context, o options, w io.Writer, p *progress, up *upstream, agent *realAgent, mm *mockModel) (runner.Config, func(), error) {
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "checkfu-quickstart-"); err != nil {
			return runner.Config{}, nil, err
		}
	}
	removeDir := func() {}
	if o.dir == "" && !o.keep {
		removeDir = func() { os.RemoveAll(dir) }
	}
	agentsDir := ""
	if agent != nil {
		agentsDir = agent.dir
	}
	prov, enrollment, stopProv, err := provider(ctx, o, w, agentsDir)
	if err != nil {
		removeDir()
		return runner.Config{}, nil, err
	}
	stop := func() { stopProv(); removeDir() }
	issues := up.base + "/v1/repos/acme/app/issues"
	assign := func(capability string) authz.PermissionAssignment {
		return authz.PermissionAssignment{Actor: member.Actor, Capability: capability, Tenant: member.Tenant, Workspace: member.Workspace, Project: member.Project, ExpiresAt: time.Now().Add(time.Hour)}
	}
	cfg := runner.Config{
		Dir: dir, Release: member.Release, Provider: prov, Enrollment: enrollment,
		Connections: []runner.Connection{{
			Credential: credential, Provider: integration,
			Rules: []egress.Rule{
				{Host: "api.example.com", Port: up.port, PathPrefix: "/v1/repos/acme/app/issues", Methods: []string{"GET"}},
				{Host: "api.example.com", Port: up.port, PathPrefix: "/v1/repos/acme/app/issues", Methods: []string{"POST"}, Headers: []string{"Content-Type"}},
			},
			Tools: []authz.Registration{
				{Capability: "issues.list", Operation: "GET", Resource: issues, Credential: credential, Effect: authz.ReadOnly,
					Tool: authz.ToolDescriptor{Name: "list_issues", Description: "List the issues of acme/app.", InputSchema: json.RawMessage(listSchema)}},
				{Capability: "issues.create", Operation: "POST", Resource: issues, Credential: credential, Effect: authz.ExternalEffect,
					Tool: authz.ToolDescriptor{Name: "create_issue", Description: "Open an issue on acme/app.", InputSchema: json.RawMessage(createSchema)}},
			},
		}},
		Assignments: []authz.PermissionAssignment{assign("issues.list"), assign("issues.create")},
		Approver: runner.ApproverFunc(func(_ context.Context, req runner.ApprovalRequest) (runner.Approval, error) {
			p.say("  approver user:carol APPROVES %s for %s with %s (action %s...)", req.Tool, req.Context.Actor, printable(string(req.Arguments)), req.Action[:19])
			return runner.Approval{Approve: true, Approver: "user:carol"}, nil
		}),
		Dialer: up.dialer, RootCAs: up.roots,
	}
	if mm != nil {
		// Step 7's model route, and the member's permission to use it.
		cfg.Connections = append(cfg.Connections, mm.connection(up))
		cfg.Assignments = append(cfg.Assignments, assign("model."+string(mm.dialect)))
	}
	if o.store != "" {
		s, err := pglog.Open(ctx, o.store)
		if err != nil {
			stop()
			return runner.Config{}, nil, err
		}
		cfg.Events = s
		stopProvider := stop
		stop = func() { s.Close(); stopProvider() }
	}
	return cfg, stop, nil
}

// admit runs steps 1 and 2: the allowlist profile with
// allow_package_managers is published and refused on the provider (in
// the trusted lane its package-manager hosts taint it; elsewhere the
// provider's grade is unsupported), then the provider's own network mode
// is published and admitted in the trusted lane. It returns the first
// host allow_package_managers granted, for step 8.
func admit(ctx context.Context, p *progress, desc adapters.Description, s *runner.Session) (string, error) {
	p.step("publish the profile (allowlist, allow_package_managers)")
	v1, err := s.Publish(ctx, profile(`"ecosystems": ["go"], `, `{"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}`), nil)
	if err != nil {
		return "", err
	}
	var hosts []string
	pmHost := ""
	for _, h := range v1.Hosts() {
		hosts = append(hosts, fmt.Sprintf("%s %v", h, h.GrantedBy))
		if pmHost == "" && slices.Contains(h.GrantedBy, admission.GrantAllowPackageManagers) {
			pmHost = h.Host
		}
	}
	p.done("version " + strconv.Itoa(v1.Version()) + ", exact hosts: " + strings.Join(hosts, ", "))

	p.step("select a provider by grade, apply the trust lane")
	lane, provenance := admission.LaneTrusted, admission.Provenance{Actor: "user:alice", Role: "admin"}
	err = s.Admit(ctx, v1, lane, provenance)
	if err == nil {
		return "", fmt.Errorf("the allowlist profile was admitted on %s, whose grade is %s", desc.Identity, adapters.Grade(desc, nil))
	}
	code, _ := checkfu.CodeOf(err)
	p.say("  v1 REFUSED on %s (grade %s, network modes %v): %s\n    %v", desc.Identity, adapters.Grade(desc, nil), desc.Capability.NetworkModes, code, err)
	mode := desc.Capability.NetworkModes[0]
	if slices.Contains(desc.Capability.NetworkModes, "none") {
		mode = "none" // an allowlist needs hosts; none needs nothing
	}
	v2, err := s.Publish(ctx, profile("", `{"type": "`+mode+`"}`), v1)
	if err != nil {
		return "", err
	}
	if err := s.Admit(ctx, v2, lane, provenance); err != nil {
		return "", err
	}
	p.done(fmt.Sprintf("version %d (network %s) admitted on %s, lane %s", v2.Version(), mode, desc.Identity, s.Record().Facts().Lane))
	return pmHost, nil
}

// converse runs steps 3 to 6 with the scripted agent, then one turn with
// a third-party agent when one is installed.
// converse fails when any message of the agent holds secret: the agent
// echoes what it was given, so the credential would show there.
func converse(ctx context.Context, o options, p *progress, desc adapters.Description, s *runner.Session, secret string) error {
	p.step("create the instance, open the agent process, check its evidence")
	argv := []string{dockerAgentPath}
	if desc.Identity.Provider == jail.Name {
		argv = []string{jailAgentPath}
	} else if o.provider != "docker" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		argv = []string{exe}
	}
	var mu sync.Mutex
	var updates []string
	var dropped int
	var leaked atomic.Bool
	onUpdate := func(n acp.SessionNotification) {
		if holds(n.Update, secret) {
			leaked.Store(true)
		}
		if text, ok := agentText(n); ok {
			mu.Lock()
			if len(updates) < maxAgentLines {
				updates = append(updates, printable(text))
			} else {
				dropped++
			}
			mu.Unlock()
		}
	}
	agent, err := s.Launch(ctx, runner.LaunchConfig{Process: adapters.ProcessSpec{Argv: argv, Env: []string{runnertest.AgentEnv + "=1"}}, OnUpdate: onUpdate})
	if err != nil {
		return err
	}
	p.done("evidence matches, assurance " + assurance(desc))

	p.step("speak ACP to the agent")
	info := agent.Info()
	p.done("initialized " + agentName(info))

	if s.Record().Facts().Placement == admission.PlacementRemote {
		p.step("no broker: the enrollment places the provider remote, where a capability is unsupported")
	} else {
		p.step("serve its tool calls through the gateway")
	}
	res, err := agent.Prompt(ctx, "List the open issues of acme/app, then file one.")
	if err != nil {
		return err
	}
	if err := agent.Close(ctx); err != nil {
		return err
	}
	if leaked.Load() {
		return errors.New("quickstart: the agent saw the credential: a message of the agent holds it")
	}
	p.done("turn ended: " + string(res.StopReason))
	mu.Lock()
	for _, u := range updates {
		fmt.Fprintln(p.w, "  agent:", u)
	}
	if dropped > 0 {
		fmt.Fprintf(p.w, "  agent: (%d more messages not shown)\n", dropped)
	}
	mu.Unlock()

	p.step("a third-party ACP agent")
	if o.provider == "docker" {
		p.done("skipped (node is not in the agent's busybox image)")
	} else {
		p.done(thirdParty(ctx, s, desc.Identity.Provider == jail.Name))
	}
	return nil
}

// agentText returns the text of an agent_message_chunk update, decoded
// strictly and bounded; false for any other update.
func agentText(n acp.SessionNotification) (string, bool) {
	var u struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if n.Kind() != "agent_message_chunk" || strictjson.Unmarshal(n.Update, &u, strictjson.Options{MaxBytes: 64 << 10, AllowUnknownMembers: true}) != nil {
		return "", false
	}
	return u.Content.Text, true
}

// holds reports whether b holds secret, whole or hex-encoded: the
// check behind "the agent never saw the credential".
func holds(b []byte, secret string) bool {
	return bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(hex.EncodeToString([]byte(secret))))
}

// maxAgentText bounds the bytes of one agent text the quickstart prints;
// maxAgentLines how many of its messages it keeps to print.
const (
	maxAgentText  = 512
	maxAgentLines = 64
)

// agentName is the agent's name and title from initialize, printable.
func agentName(info *acp.InitializeResponse) string {
	if info == nil || info.AgentInfo == nil {
		return "an agent that gave no agentInfo"
	}
	return printable(info.AgentInfo.Name) + " (" + printable(info.AgentInfo.Title) + ")"
}

// printable makes an agent's text safe to print on a terminal: every
// rune that is not printable (C0 and C1 controls, so escape sequences,
// carriage returns and newlines; line and paragraph separators;
// bidirectional overrides and other format characters; invalid UTF-8)
// becomes '.', and text beyond maxAgentText bytes is cut on a character
// boundary with its length appended.
func printable(s string) string {
	n := len(s)
	if n > maxAgentText {
		i := maxAgentText
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	out := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '.'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if n > maxAgentText {
		out += fmt.Sprintf("... (%d bytes)", n)
	}
	return out
}

func assurance(d adapters.Description) string {
	switch {
	case d.Identity.Provider == process.Name:
		return string(adapters.AssuranceIsolationChecked) + " (of the comparison: the process provider isolates nothing, so it is for the trusted lane only)"
	case d.Identity.Provider == process.RemoteName:
		return string(adapters.AssuranceIdentityOnly) + " (across acp/wire both sides of the enforcement clause are the provider's own statements)"
	case d.Identity.Provider == jail.Name:
		return string(adapters.AssuranceIsolationChecked) + " (the jail read back from /proc before the agent's exec)"
	case d.Placement == admission.PlacementInProcess:
		return string(adapters.AssuranceIsolationChecked) + " (the isolation read back from the engine before start)"
	}
	return string(adapters.AssuranceIdentityOnly)
}

// thirdParty runs one turn with a third-party ACP agent when the acp
// tests' environment names one and node is installed. In a jail, node
// comes from the host's read-only system directories and the agent's
// directory is bound read-only at jailThirdPartyPath.
func thirdParty(ctx context.Context, s *runner.Session, jailed bool) string {
	argv := thirdPartyArgv()
	if len(argv) == 0 {
		return "skipped (set CHECKFU_TEST_ACP_SDK_AGENT or CHECKFU_TEST_ACP_AGENT to a node ACP agent)"
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return "skipped (" + argv[0] + " is not installed)"
	}
	argv[0] = path
	if jailed {
		root := thirdPartyRoot(argv)
		if root == "" {
			return "skipped (the agent's script is not an absolute path, so it cannot be bound into the jail)"
		}
		argv = inJail(argv, root)
	}
	var updates atomic.Int64
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: adapters.ProcessSpec{Argv: argv}, OnUpdate: func(acp.SessionNotification) { updates.Add(1) }})
	if err != nil {
		return "refused: " + err.Error()
	}
	defer a.Close(ctx)
	res, err := a.Prompt(ctx, "Say hello.")
	if err != nil {
		return "turn failed: " + err.Error()
	}
	name := filepath.Base(argv[len(argv)-1])
	if a.Info().AgentInfo != nil {
		name = printable(a.Info().AgentInfo.Name)
	}
	return fmt.Sprintf("%s (third-party, node): turn ended %s after %d updates; its own tools are allowed only to read the workspace (workspace_read_permission), else denied (permission_unbound)", name, res.StopReason, updates.Load())
}

// An upstream is the local provider the Connection reaches.
type upstream struct {
	srv    *httptest.Server
	dns    *dnstest.Server
	base   string
	port   uint16
	dialer *egress.Dialer
	roots  *x509.CertPool
	hits   atomic.Int64
}

// startUpstream starts the upstream: it answers only requests carrying
// the credential, which only custody's edge attaches.
func startUpstream(credential string) (*upstream, error) {
	u := &upstream{}
	u.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		if req.Header.Get("Authorization") != "Bearer "+credential {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		u.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if req.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"created":{"n":2}}`)
			return
		}
		fmt.Fprint(w, `{"issues":[{"n":1,"title":"the quickstart is too slow"}]}`)
	}))
	u.port = u.srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	u.base = "https://api.example.com:" + strconv.Itoa(int(u.port))
	var err error
	if u.dns, err = dnstest.Start(); err != nil {
		u.srv.Close()
		return nil, err
	}
	u.dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	u.dialer, err = egress.NewDialer(egress.DialerConfig{
		Resolver: u.dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		u.close()
		return nil, err
	}
	u.roots = u.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return u, nil
}

func (u *upstream) close() {
	u.srv.Close()
	u.dns.Close()
}

// openSession opens a session of r for member, named prefix and a random
// suffix, as the application server's side does: it issues the session's
// server-owned token and opens the session with it.
func openSession(ctx context.Context, r *runner.Runner, prefix string) (*runner.Session, error) {
	rc := member
	id := make([]byte, 4)
	rand.Read(id)
	rc.Session = prefix + hex.EncodeToString(id)
	tok, err := r.IssueToken(rc, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	return r.Open(ctx, tok)
}
