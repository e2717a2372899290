package acp_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
	"github.com/google/go-cmp/cmp"
)

// agentCommand returns the command running the pinned third-party ACP agent
// installed by .ci/setup.d/30-acp-agent.sh. It skips when the agent is not
// installed outside CI, and fails in CI.
func agentCommand(t *testing.T) []string {
	t.Helper()
	cmd := strings.Fields(os.Getenv("CHECKFU_TEST_ACP_AGENT"))
	if len(cmd) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CHECKFU_TEST_ACP_AGENT is empty in CI: .ci/setup.d/30-acp-agent.sh did not install the ACP agent")
		}
		t.Skip("CHECKFU_TEST_ACP_AGENT not set; run .ci/setup.d/30-acp-agent.sh or set it to the agent's command")
	}
	return cmd
}

// sdkAgentCommand returns the command running acp/testdata/sdk-agent.mjs
// on the pinned official SDK, under the same skip/fail rule.
func sdkAgentCommand(t *testing.T) []string {
	t.Helper()
	cmd := strings.Fields(os.Getenv("CHECKFU_TEST_ACP_SDK_AGENT"))
	if len(cmd) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CHECKFU_TEST_ACP_SDK_AGENT is empty in CI: .ci/setup.d/30-acp-agent.sh did not install the SDK agent")
		}
		t.Skip("CHECKFU_TEST_ACP_SDK_AGENT not set; run .ci/setup.d/30-acp-agent.sh or set it to the agent's command")
	}
	return cmd
}

// startProcess starts argv with piped stdin and stdout; stderr is kept and
// logged if the test fails. The process is killed at cleanup if still
// running.
func startProcess(t *testing.T, argv []string) (stdout io.Reader, stdin io.WriteCloser, wait func() error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waited bool
	var werr error
	wait = func() error {
		if !waited {
			werr, waited = <-done, true
		}
		return werr
	}
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			wait()
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", argv[0], stderr.String())
		}
	})
	return out, in, wait
}

// runTurn drives initialize -> session/new -> session/prompt (answering the
// permission request) -> end_turn over r/w and returns the transcript.
func runTurn(t *testing.T, r io.Reader, w io.WriteCloser) []string {
	t.Helper()
	var tr acptest.Transcript
	return runTurnWith(t, r, w, &tr, acp.Config{OnUpdate: tr.OnUpdate, OnPermission: tr.OnPermission})
}

// runTurnWith is runTurn with the client configured by cfg, recording into
// tr (which cfg's handlers are expected to feed).
func runTurnWith(t *testing.T, r io.Reader, w io.WriteCloser, tr *acptest.Transcript, cfg acp.Config) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	c := acp.NewClient(r, w, cfg)
	defer c.Close()
	init, err := c.Initialize(ctx)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	tr.Addf("initialize protocolVersion=%d", init.ProtocolVersion)
	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if s.SessionID == "" {
		t.Fatal("session/new returned an empty session id")
	}
	tr.Addf("session/new")
	res, err := c.Prompt(ctx, s.SessionID, acp.TextBlock("Please edit the config."))
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	tr.Addf("stopReason %s", res.StopReason)
	if res.StopReason != acp.StopEndTurn {
		t.Errorf("stopReason = %q, want %q", res.StopReason, acp.StopEndTurn)
	}
	return tr.Lines()
}

// checkTurn checks the shape of a transcript of the reference agent's turn.
func checkTurn(t *testing.T, lines []string) {
	t.Helper()
	var perms, updates int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "permission "):
			perms++
		case strings.HasPrefix(l, "update "):
			updates++
		}
	}
	if perms != 1 || updates < 4 || lines[len(lines)-1] != "stopReason end_turn" {
		t.Errorf("transcript has %d permission requests and %d updates, want 1 and >= 4, ending in end_turn:\n%s",
			perms, updates, strings.Join(lines, "\n"))
	}
}

// TestRealAgentDirect drives the pinned third-party agent as a local
// process: a full turn with a permission request, then a clean exit on
// closing its stdin.
func TestRealAgentDirect(t *testing.T) {
	argv := agentCommand(t)
	out, in, wait := startProcess(t, argv)
	lines := runTurn(t, out, in)
	checkTurn(t, lines)
	if err := wait(); err != nil {
		t.Errorf("agent exit after stdin closed: %v", err)
	}
}

// TestSDKAgentDirect drives the small agent on the official TypeScript
// SDK as a local process. The SDK refuses a session/new sent before the
// initialize reply, so this also shows the client does not pipeline.
func TestSDKAgentDirect(t *testing.T) {
	argv := sdkAgentCommand(t)
	out, in, wait := startProcess(t, argv)
	lines := runTurn(t, out, in)
	checkTurn(t, lines)
	if err := wait(); err != nil {
		t.Errorf("agent exit after stdin closed: %v", err)
	}
}

// TestFakeAgentTurn pins that the fake agent's turn has the same
// shape as the real agent's, so client tests against the fake mean something.
func TestFakeAgentTurn(t *testing.T) {
	out, in := acptest.Start(t, &acptest.Agent{})
	lines := runTurn(t, out, in)
	checkTurn(t, lines)
	want := []string{
		"initialize protocolVersion=1",
		"session/new",
		`update {"content":{"type":"text","text":"before 0"},"sessionUpdate":"agent_message_chunk"}`,
		`update {"content":{"type":"text","text":"before 1"},"sessionUpdate":"agent_message_chunk"}`,
		`update {"kind":"edit","sessionUpdate":"tool_call","status":"pending","title":"Edit config","toolCallId":"call_1"}`,
		`permission call_1 [{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]`,
		`update {"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"call_1"}`,
		`update {"content":{"type":"text","text":"after 0"},"sessionUpdate":"agent_message_chunk"}`,
		`update {"content":{"type":"text","text":"after 1"},"sessionUpdate":"agent_message_chunk"}`,
		"stopReason end_turn",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}
