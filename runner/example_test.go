package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// New with a directory for the default SQLite stores, the process
// provider and ephemeral keys.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "checkfu-runner-")
	defer os.RemoveAll(dir)
	r, err := runner.New(context.Background(), runner.Config{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	d := r.Description()
	fmt.Println(d.Identity, d.Placement, d.Capability.EgressCertification)
	// Output: checkfu:process-provider@1 in_process unsupported
}

// Open takes the server-owned token the application server presented;
// only the Runner's token key opens a session.
func ExampleRunner_Open() {
	t := &exampleTB{}
	defer t.done()
	g, other := newRig(t, nil), newRig(t, nil)
	ctx := context.Background()
	foreign, _ := other.IssueToken(member, time.Minute)
	_, err := g.Open(ctx, foreign)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	tok, _ := g.IssueToken(member, time.Minute)
	s, err := g.Open(ctx, tok)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.ID(), s.Context().Actor)
	// Output:
	// token_invalid
	// sess-1 user:bob
}

// Publish turns allow_package_managers into the exact hosts of the
// declared ecosystems, each with the grant that put it there.
func ExampleSession_Publish() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).session(t)
	v, err := s.Publish(context.Background(), []byte(`{"name": "p",
		"image": {"ref": "docker.io/library/node:22", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "ecosystems": ["npm"],
		"network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range v.Hosts() {
		fmt.Println(h, h.GrantedBy)
	}
	// Output:
	// api.example.com:443 [allowed_hosts]
	// registry.npmjs.org:443 [allow_package_managers]
}

// Admit refuses an allowlist on the process provider, whose grade is
// unsupported, and admits an unrestricted version in the trusted lane.
func ExampleSession_Admit() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).session(t)
	ctx := context.Background()
	v1, _ := s.Publish(ctx, profileDoc(`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`), nil)
	err := s.Admit(ctx, v1, admission.LaneTrusted, admission.Provenance{Actor: "user:alice", Role: "admin"})
	fmt.Println(errors.Is(err, admission.CodeProviderUnavailable))
	v2, _ := s.Publish(ctx, profileDoc(`{"type": "unrestricted"}`), v1)
	if err := s.Admit(ctx, v2, admission.LaneTrusted, admission.Provenance{Actor: "user:alice", Role: "admin"}); err != nil {
		fmt.Println(err)
		return
	}
	f := s.Record().Facts()
	fmt.Println(s.Record().Target(), f.Lane)
	// Output:
	// true
	// checkfu:process-provider@1 trusted
}

// Launch opens the agent process (here the scripted agent, this test
// binary re-executed), checks its evidence and initializes ACP.
func ExampleSession_Launch() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).admitted(t)
	ctx := context.Background()
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close(ctx)
	fmt.Println(a.Info().AgentInfo.Name)
	// Output: checkfu-scripted-agent
}

// Prompt plays one turn: the agent's tool calls go through the broker
// and the gateway, and its permission request goes to the Approver.
func ExampleAgent_Prompt() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).admitted(t)
	ctx := context.Background()
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript), OnUpdate: collect(&said)})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Prompt(ctx, "List the issues, then file one.")
	if err != nil {
		fmt.Println(err)
		return
	}
	a.Close(ctx)
	fmt.Println(res.StopReason)
	for _, line := range said {
		fmt.Println(line)
	}
	// Output:
	// end_turn
	// [scripted] tools/list -> create_issue, list_issues
	// [scripted] list_issues -> {"issues":[1]}
	// [scripted] list_issues (smuggling an Authorization header in its arguments) -> refused: arguments_invalid
	// [scripted] create_issue -> permitted by the client
	// [scripted] create_issue -> {"created":2}
}

// WriteLog prints the session's log as a table of envelope fields.
func ExampleSession_WriteLog() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).session(t)
	ctx := context.Background()
	v, _ := s.Publish(ctx, profileDoc(`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`), nil)
	_ = s.Admit(ctx, v, admission.LaneTrusted, admission.Provenance{Actor: "user:alice", Role: "admin"})
	s.WriteLog(ctx, os.Stdout)
	// Output:
	// SEQ  KIND       DECISION  CODE                  ACTOR     SUBJECT                                    RESULT
	// 1    admission  allow     -                     user:bob  profile p@1                                published
	// 2    admission  deny      provider_unavailable  user:bob  profile p@1 on checkfu:process-provider@1  refused
}

// Verify checks the session log's hash chain.
func ExampleSession_Verify() {
	t := &exampleTB{}
	defer t.done()
	s := newRig(t, nil).admitted(t)
	head, err := s.Verify(context.Background())
	fmt.Println(head.Seq, err)
	// Output: 2 <nil>
}

// A key file keeps the plane's keys across restarts, sealed under a key
// the host keeps elsewhere; Rotate adds a custody key version.
func ExampleOpenKeyFile() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "checkfu-keyfile-example-")
	defer os.RemoveAll(dir)
	kek := bytes.Repeat([]byte{1}, runner.LocalKeyWrapperKeySize) // from the host's secret store
	w, err := runner.LocalKeyWrapper(kek)
	if err != nil {
		panic(err)
	}
	kf, err := runner.OpenKeyFile(ctx, filepath.Join(dir, "keys"), w) // created on first use
	if err != nil {
		panic(err)
	}
	if err := kf.Rotate(ctx); err != nil {
		panic(err)
	}
	again, err := runner.OpenKeyFile(ctx, filepath.Join(dir, "keys"), w)
	if err != nil {
		panic(err)
	}
	ks, _ := again.Custody()
	fmt.Println(ks)
	// Output: custody.Keyset(primary=2 versions=[1 2])
}
