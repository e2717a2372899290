package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/internal/pgtest"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestMain makes the test binary the scripted agent when the Runner
// re-executes it in agent mode, as the quickstart binary does.
func TestMain(m *testing.M) {
	jail.InitMain()
	if os.Getenv(runnertest.AgentEnv) == "1" {
		os.Exit(runnertest.Main())
	}
	os.Exit(m.Run())
}

// quickstart runs the quickstart with provider (and the log in the
// PostgreSQL at store, when not empty) and returns its output. agent,
// when not empty, is the real agent of step 7, run when agentsDir names
// where the pinned agents are installed.
func quickstart(t *testing.T, provider, store, agent, agentsDir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, options{provider: provider, store: store, dir: t.TempDir(), agent: agent, agentsDir: agentsDir}, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// checkSession checks that the printed log shows the allowed call, the
// denied call with its code, the approval and the verified chain, that
// the credential never reached the output, and that the upstream saw
// hits credentialed requests.
func checkSession(t *testing.T, out string, hits int) {
	t.Helper()
	checkRun(t, out, hits)
	if want := regexp.MustCompile(`(?m)^\d+ +admission +deny +provider_unavailable +user:alice +profile quickstart@1 on `); !want.MatchString(out) {
		t.Errorf("the output does not match %s", want)
	}
}

// checkRun checks what every provider's run shows, whichever profile
// version was admitted: the scripted agent's calls, and hits
// credentialed requests at the upstream in all.
func checkRun(t *testing.T, out string, hits int) {
	t.Helper()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\d+ +process_started +allow +- +user:alice +\S+ +(isolation_checked|identity_only)$`),
		regexp.MustCompile(`(?m)^\d+ +tool_call +- +- +user:alice +tool list_issues +http_200$`),
		regexp.MustCompile(`(?m)^\d+ +denial +deny +arguments_invalid +user:alice +tool list_issues +refused$`),
		regexp.MustCompile(`(?m)^\d+ +approval_decision +allow +- +user:alice +approval \S+ by user:carol +approved$`),
		regexp.MustCompile(`(?m)^\d+ +approval_result +- +- +user:alice +approval \S+ by user:carol +succeeded$`),
		regexp.MustCompile(`(?m)^\d+ +tool_call +- +- +user:alice +tool create_issue +http_201$`),
		regexp.MustCompile(`(?m)^\d+ +process_exited +- +- +user:alice +\S+ +exit_0$`),
		regexp.MustCompile(`(?m)^\d+ +tool_call +allow +- +user:alice +tool create_issue +authorized$`),
		regexp.MustCompile(`(?m)^chain verified: \d+ events, head [0-9a-f]{16}$`),
		regexp.MustCompile(`agent: \[scripted\] list_issues \(smuggling an Authorization header in its arguments\) -> refused: arguments_invalid`),
		regexp.MustCompile(`approver user:carol APPROVES create_issue`),
		regexp.MustCompile(`upstream saw ` + strconv.Itoa(hits) + ` credentialed requests`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the output does not match %s", want)
		}
	}
	if strings.Contains(out, "qs_") {
		t.Error("the output holds the credential")
	}
}

// TestQuickstartProcess runs the quickstart on the process provider.
// When the acp tests' environment names a third-party agent (CI sets it,
// .ci/setup.d/30-acp-agent.sh), its turn must have run too, and so must
// Claude Code's when the pinned agents are installed (pinnedAgents).
func TestQuickstartProcess(t *testing.T) {
	dir := pinnedAgents(t)
	out := quickstart(t, "process", "", "claude-code", dir)
	checkSession(t, out, hits(dir))
	checkThirdParty(t, out)
	checkRealAgent(t, out, "claude-code", dir != "")
	checkAllowlistSkipped(t, out, `checkfu:process-provider@1 has no allowlist mode: network modes \[unrestricted\]`)
}

// checkAllowlistSkipped checks that step 8 is one line saying it is
// skipped and why (why, a regular expression).
func checkAllowlistSkipped(t *testing.T, out, why string) {
	t.Helper()
	skip := regexp.MustCompile(`(?m)^step 8/9 an allowlist session, capability-free, the guard deciding every request: skipped \(` + why + `\) \(\S+\)\n(step 9/9 )`)
	if !skip.MatchString(out) {
		t.Errorf("step 8 is not one line matching %s", skip)
	}
}

// checkAllowlistRan checks step 8 on the jail: the allowlist session was
// admitted in the trusted lane at advisory_filter, the output says why
// allow_package_managers stays refused and labels the upstream a mock,
// the agent got 200 for the allowed host, the guard's 403
// host_not_allowed for the package-manager host and no answer ignoring
// the proxy, and the quickstart checked what the upstream saw.
func checkAllowlistRan(t *testing.T, out string) {
	t.Helper()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^step 8/9 an allowlist session, capability-free, the guard deciding every request: version 1 \(allowlist api\.example\.com:\d+, nothing else\) admitted on checkfu:jail-provider@1, lane trusted, grade advisory_filter \(`),
		regexp.MustCompile(`(?m)^  allow_package_managers stays refused in the trusted lane \(.*trusted_lane_tainted\); this session shows the allowlist mode itself, the guard deciding every request$`),
		regexp.MustCompile(`(?m)^  upstream: MOCK, an httptest server on 127\.0\.0\.1 \(as api\.example\.com and as \S+\), reached only through the guard`),
		regexp.MustCompile(`(?m)^  agent: \[scripted\] GET http://api\.example\.com:\d+/ -> 200$`),
		regexp.MustCompile(`(?m)^  agent: \[scripted\] GET http://\S+:\d+/ -> 403 host_not_allowed$`),
		regexp.MustCompile(`(?m)^  agent: \[scripted\] GET http://127\.0\.0\.1:\d+/ \(ignoring the proxy\) -> no answer: `),
		regexp.MustCompile(`(?m)^  checked: the allowed host reached the upstream once, the refused host never \(403 host_not_allowed from the guard\), the direct connection nothing$`),
		regexp.MustCompile(`(?m)^step 9/9 the session's event log`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the output does not match %s", want)
		}
	}
}

// pinnedAgents returns where the agents pinned in .ci/agents are
// installed (agentsDirEnv, exported by .ci/setup.d/50-real-agents.sh):
// "" on a developer's machine without them, where step 7 prints how to
// enable it; in CI (CI set) a missing install fails the test, so CI
// never passes without the real agent's turn.
func pinnedAgents(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(agentsDirEnv)
	if dir == "" && os.Getenv("CI") != "" {
		t.Fatalf("%s is not set in CI: .ci/setup.d/50-real-agents.sh installs the pinned agents", agentsDirEnv)
	}
	return dir
}

// hits is how many credentialed requests the upstream sees: the scripted
// agent's two, and the real agent's one when it runs.
func hits(agentsDir string) int {
	if agentsDir != "" {
		return 3
	}
	return 2
}

// checkRealAgent checks step 7: with ran, agent's turn ended through the
// door, its model (labelled a mock) saw only the key the edge attached,
// its list_issues call and its model calls are in the log; otherwise
// step 7 is one line saying how to enable it.
func checkRealAgent(t *testing.T, out, agent string, ran bool) {
	t.Helper()
	if !ran {
		skip := regexp.MustCompile(`(?m)^step 7/9 a real coding agent through the door \(its model a mock\): skipped: to run .* for one turn, set ` + agentsDirEnv + ` to .*\n(step 8/9 )`)
		if !skip.MatchString(out) {
			t.Errorf("step 7 is not one line matching %s", skip)
		}
		return
	}
	launch, _ := admission.Agent(agent)
	model := regexp.QuoteMeta(launch.Model)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^step 7/9 a real coding agent through the door \(its model a mock\): ` + regexp.QuoteMeta(agentTitle(agent)) + `: turn ended end_turn \(`),
		regexp.MustCompile(`(?m)^  agent: ` + regexp.QuoteMeta(runnertest.ModelFinal) + `$`),
		regexp.MustCompile(`(?m)^  model: MOCK, runnertest.Model, .*: \d+ \S+ requests, all through the door's model route$`),
		regexp.MustCompile(`(?m)^  checked: the model server saw the key the edge attached on every request, never the agent's placeholder; `),
		regexp.MustCompile(`(?m)^\d+ +skip +allow +- +user:alice +- +read_only_permission$`),
		regexp.MustCompile(`(?m)^\d+ +tool_call +allow +- +user:alice +tool ` + model + ` +authorized$`),
		regexp.MustCompile(`(?m)^\d+ +settlement +- +- +user:alice +tool ` + model + ` +http_200$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the output does not match %s", want)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^\d+ +tool_call +- +- +user:alice +tool list_issues +http_200$`).FindAllString(out, -1)); n != 2 {
		t.Errorf("the log shows %d list_issues calls answered 200, want 2 (the scripted agent's and %s's)", n, agent)
	}
	if strings.Contains(out, "real model") {
		t.Error("the output calls the mock a real model")
	}
}

// checkThirdParty requires the third-party agent's turn in out when the
// acp tests' environment names an agent.
func checkThirdParty(t *testing.T, out string) {
	t.Helper()
	if os.Getenv("CHECKFU_TEST_ACP_SDK_AGENT") != "" || os.Getenv("CHECKFU_TEST_ACP_AGENT") != "" {
		third := regexp.MustCompile(`a third-party ACP agent: \S+ \(third-party, node\): turn ended end_turn`)
		if !third.MatchString(out) {
			t.Errorf("the output does not match %s", third)
		}
	}
}

// TestQuickstartProcessWire runs the agent across acp/wire (process's
// Remote, enrolled remote as an operator would): the evidence assurance
// is identity_only, and the sandbox gets no broker, so no tool call
// reaches the gateway, its permission request is denied
// capability_unsupported and the upstream sees nothing.
func TestQuickstartProcessWire(t *testing.T) {
	out := quickstart(t, "process-wire", "", "", os.Getenv(agentsDirEnv))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\d+ +process_started +allow +- +user:alice +checkfu:process-wire-provider@1 +identity_only$`),
		regexp.MustCompile(`(?m)^\d+ +denial +deny +capability_unsupported +user:alice +`),
		regexp.MustCompile(`agent: \[scripted\] cannot reach the broker`),
		regexp.MustCompile(`(?m)^chain verified: \d+ events, head [0-9a-f]{16}$`),
		regexp.MustCompile(`upstream saw 0 credentialed requests`),
		regexp.MustCompile(`(?m)^step 7/9 a real coding agent through the door \(its model a mock\): skipped \(a remote placement gets no broker, so no door: use -provider jail or process\)`),
		regexp.MustCompile(`(?m)^step 8/9 an allowlist session, capability-free, the guard deciding every request: skipped \(checkfu:process-wire-provider@1 has no allowlist mode`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the output does not match %s", want)
		}
	}
	if regexp.MustCompile(`(?m)^\d+ +tool_call `).MatchString(out) {
		t.Error("a tool call of a remote placement reached the gateway")
	}
	if strings.Contains(out, "qs_") {
		t.Error("the output holds the credential")
	}
}

// TestQuickstartPostgres logs to PostgreSQL: it runs when
// CHECKFU_TEST_POSTGRES_DSN names a server, in a schema of its own, and
// fails under CI without one (internal/pgtest). Step 7 runs Gemini CLI
// on process when the pinned agents are installed, which CI requires:
// the third real agent's turn, logged to PostgreSQL.
func TestQuickstartPostgres(t *testing.T) {
	dir := pinnedAgents(t)
	out := quickstart(t, "process", pgtest.SchemaDSN(t, "quickstart"), "gemini-cli", dir)
	checkSession(t, out, hits(dir))
	checkRealAgent(t, out, "gemini-cli", dir != "")
	if !strings.Contains(out, "log: PostgreSQL, session qs-") {
		t.Error("the output does not say the log is in PostgreSQL")
	}
}

// TestQuickstartDocker runs the same session in a container. It runs
// when CHECKFU_TEST_DOCKER=1 (CI sets it when its engine runs) and then
// fails, never skips, when no engine answers.
func TestQuickstartDocker(t *testing.T) {
	if os.Getenv("CHECKFU_TEST_DOCKER") != "1" {
		t.Skip("set CHECKFU_TEST_DOCKER=1 with an engine at DOCKER_HOST")
	}
	out := quickstart(t, "docker", "", "", os.Getenv(agentsDirEnv))
	checkSession(t, out, 2)
	if !strings.Contains(out, "step 7/9 a real coding agent through the door (its model a mock): skipped (node and the pinned agents are not in the agent's busybox image") {
		t.Error("step 7 does not say why it is skipped in a container")
	}
	checkAllowlistSkipped(t, out, `the quickstart's containers run network none; .*`)
}

// TestQuickstartJail runs the quickstart on the jail provider, its
// default: the agent runs in a namespace jail with the broker's socket
// bound in, its isolation read back. Under CI the kernel must allow the
// jail. Step 7 runs Codex, the default -agent, in the jail with network
// none when the pinned agents are installed, which CI requires.
func TestQuickstartJail(t *testing.T) {
	if _, err := jail.New(jail.Config{}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := pinnedAgents(t)
	out := quickstart(t, "jail", "", "codex", dir)
	checkSession(t, out, hits(dir))
	checkThirdParty(t, out)
	checkRealAgent(t, out, "codex", dir != "")
	checkAllowlistRan(t, out)
	if want := regexp.MustCompile(`(?m)^\d+ +process_started +allow +- +user:alice +checkfu:jail-provider@1 +isolation_checked$`); !want.MatchString(out) {
		t.Errorf("the output does not match %s", want)
	}
}

// TestThirdPartyPathsInTheJail: the agent's directory is the parent of
// the node_modules its script is in (or the script's own directory), and
// only arguments under it move to where it is bound.
func TestThirdPartyPathsInTheJail(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		root string
		want []string
	}{
		{[]string{"/usr/bin/node", "/ci/acp/sdk-agent.mjs"}, "/ci/acp", []string{"/usr/bin/node", jailThirdPartyPath + "/sdk-agent.mjs"}},
		{[]string{"/usr/bin/node", "/ci/acp/node_modules/tsx/cli.mjs", "/ci/acp/node_modules/x/agent.ts"}, "/ci/acp",
			[]string{"/usr/bin/node", jailThirdPartyPath + "/node_modules/tsx/cli.mjs", jailThirdPartyPath + "/node_modules/x/agent.ts"}},
		{[]string{"/usr/bin/node", "/ci/acp/../etc/passwd", "/ci/acpxy/z", "/ci/acpx/a.mjs"}, "/ci/acpx",
			[]string{"/usr/bin/node", "/ci/acp/../etc/passwd", "/ci/acpxy/z", jailThirdPartyPath + "/a.mjs"}},
		{[]string{"node", "agent.mjs"}, "", nil},
		{[]string{"node"}, "", nil},
	} {
		root := thirdPartyRoot(tt.argv)
		if root != tt.root {
			t.Errorf("thirdPartyRoot(%q) = %q, want %q", tt.argv, root, tt.root)
			continue
		}
		if root == "" {
			continue
		}
		if got := inJail(tt.argv, root); !slices.Equal(got, tt.want) {
			t.Errorf("inJail(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}
