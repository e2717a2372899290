package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// allowlistStep runs step 8: when the main job runs in a jail, a second,
// capability-free session (a Runner with no Connections, so no broker
// and no plane) whose profile is an allowlist naming only the mock host
// api.example.com, admitted in the trusted lane on a jail whose guard
// decides every request. Its scripted agent asks for the allowed host,
// for pmHost (a package-manager host of the preset catalog, which the
// profile does not list) and, ignoring the proxy, connects directly.
// Elsewhere the step is one line saying why it is skipped.
func allowlistStep(ctx context.Context, o options, p *progress, desc adapters.Description, dir string, up *upstream, pmHost string) error {
	p.step("an allowlist session, capability-free, the guard deciding every request")
	switch {
	case o.provider == "docker":
		p.done("skipped (the quickstart's containers run network none; the allowlist topology is adapters/docker's, shown by its own tests)")
		return nil
	case desc.Identity.Provider != jail.Name || !slices.Contains(desc.Capability.NetworkModes, "allowlist"):
		p.done(fmt.Sprintf("skipped (%s has no allowlist mode: network modes %v)", desc.Identity, desc.Capability.NetworkModes))
		return nil
	case pmHost == "":
		return errors.New("quickstart: the preset catalog granted no package-manager host in step 1")
	}
	mock := startMockHost(up, pmHost)
	defer mock.close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	prov, err := jail.New(jail.Config{
		Binds: []jail.Bind{{Source: exe, Target: jailAgentPath}},
		Guard: jail.LocalGuard(jail.GuardOptions{Resolver: up.dns.Addr(), Logger: slog.New(slog.DiscardHandler),
			TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}),
	})
	if err != nil {
		return err
	}
	// No Connections: no catalog, so the session gets no plane and its
	// agent no broker.
	dir = filepath.Join(dir, "allowlist")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	r, err := runner.New(ctx, runner.Config{Dir: dir, Release: member.Release, Provider: prov})
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := openSession(ctx, r, "qs-allowlist-")
	if err != nil {
		return err
	}
	defer s.Close()
	allowed := "api.example.com:" + strconv.Itoa(int(mock.port))
	v, err := s.Publish(ctx, profile("", `{"type": "allowlist", "allowed_hosts": ["`+allowed+`"]}`), nil)
	if err != nil {
		return err
	}
	if err := s.Admit(ctx, v, admission.LaneTrusted, admission.Provenance{Actor: "user:alice", Role: "admin"}); err != nil {
		return err
	}
	script := []runnertest.Step{
		{Get: "http://" + allowed + "/"},
		{Get: "http://" + pmHost + ":" + strconv.Itoa(int(mock.port)) + "/"},
		{Get: "http://127.0.0.1:" + strconv.Itoa(int(mock.port)) + "/", Direct: true},
	}
	var mu sync.Mutex
	var said []string
	agent, err := s.Launch(ctx, runner.LaunchConfig{
		Process: adapters.ProcessSpec{Argv: []string{jailAgentPath}, Env: []string{runnertest.AgentEnv + "=1", runnertest.ScriptArg(script)}},
		OnUpdate: func(n acp.SessionNotification) {
			if text, ok := agentText(n); ok {
				mu.Lock()
				if len(said) < maxAgentLines {
					said = append(said, text)
				}
				mu.Unlock()
			}
		},
	})
	if err != nil {
		return err
	}
	if _, err := agent.Prompt(ctx, "Fetch what the allowlist names, then try around it."); err != nil {
		agent.Close(ctx)
		return err
	}
	if err := agent.Close(ctx); err != nil {
		return err
	}
	facts := s.Record().Facts()
	p.done(fmt.Sprintf("version %d (allowlist %s, nothing else) admitted on %s, lane %s, grade %s", v.Version(), allowed, desc.Identity, facts.Lane, adapters.Grade(prov.Describe(), nil)))
	fmt.Fprintln(p.w, "  allow_package_managers stays refused in the trusted lane (its hosts serve third-party executable content: trusted_lane_tainted); this session shows the allowlist mode itself, the guard deciding every request")
	fmt.Fprintf(p.w, "  upstream: MOCK, an httptest server on 127.0.0.1 (as api.example.com and as %s), reached only through the guard, which treats 127.0.0.1/32 as public with the testing-only jail.GuardOptions.TreatAsPublicForTesting\n", pmHost)
	mu.Lock()
	lines := slices.Clone(said)
	mu.Unlock()
	for _, l := range lines {
		fmt.Fprintln(p.w, "  agent:", printable(l))
	}
	if err := checkAllowlist(lines, script, mock.allowed.Load(), mock.refused.Load(), mock.other.Load()); err != nil {
		return err
	}
	fmt.Fprintf(p.w, "  checked: the allowed host reached the upstream once, the refused host never (403 host_not_allowed from the guard), the direct connection nothing\n")
	return nil
}

// checkAllowlist is the check behind step 8's "checked" line: the agent
// said, for each step of script, the answer the guard must give (200
// for the allowed host, 403 host_not_allowed for the package-manager
// host, no answer for the direct connection), and the mock upstream saw
// exactly one request, naming the allowed host: none naming the refused
// host (allowed, refused and other count what it saw by Host).
func checkAllowlist(said []string, script []runnertest.Step, allowed, refused, other int64) error {
	want := []string{" -> 200", " -> 403 host_not_allowed", " (ignoring the proxy) -> no answer: "}
	if len(said) != len(script) || len(script) != len(want) {
		return fmt.Errorf("quickstart: the allowlist session's agent said %d things, want %d", len(said), len(want))
	}
	for i, st := range script {
		prefix := "[scripted] GET " + st.Get + want[i]
		if said[i] != prefix && !(strings.HasSuffix(want[i], ": ") && strings.HasPrefix(said[i], prefix)) {
			return fmt.Errorf("quickstart: the allowlist session's agent said %q, want %q", printable(said[i]), prefix)
		}
	}
	switch {
	case refused != 0:
		return fmt.Errorf("quickstart: the upstream saw %d requests naming the host the guard must refuse", refused)
	case other != 0:
		return fmt.Errorf("quickstart: the upstream saw %d requests naming neither host (the direct connection)", other)
	case allowed != 1:
		return fmt.Errorf("quickstart: the upstream saw %d requests naming the allowed host, want 1", allowed)
	}
	return nil
}

// A mockHost is step 8's upstream: a plain HTTP server on 127.0.0.1
// that the guard reaches as api.example.com, and would reach as the
// package-manager host, both names the upstream's DNS server gives
// 127.0.0.1, so a refusal is the guard's and not a dead port. It counts
// what it saw by the request's Host.
type mockHost struct {
	srv                     *httptest.Server
	port                    uint16
	allowed, refused, other atomic.Int64
}

func startMockHost(up *upstream, pmHost string) *mockHost {
	m := &mockHost{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		host, _, _ := net.SplitHostPort(req.Host)
		switch host {
		case "api.example.com":
			m.allowed.Add(1)
		case pmHost:
			m.refused.Add(1)
		default:
			m.other.Add(1)
		}
		w.Write([]byte("mock"))
	}))
	m.port = m.srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	up.dns.Set(pmHost, netip.MustParseAddr("127.0.0.1"))
	return m
}

func (m *mockHost) close() { m.srv.Close() }
