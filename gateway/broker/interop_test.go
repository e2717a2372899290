package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// interopCommand returns the command .ci/setup.d/40-mcp.sh exported in
// env, skipping locally without it and failing under CI=true.
func interopCommand(t *testing.T, env string) []string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: .ci/setup.d/40-mcp.sh must run before the tests in CI", env)
		}
		t.Skipf("%s is not set (run .ci/setup.d/40-mcp.sh)", env)
	}
	return strings.Fields(v)
}

// httpBroker serves b over streamable HTTP on a loopback listener.
func httpBroker(t *testing.T, b *broker.Broker) string {
	t.Helper()
	srv := httptest.NewServer(b.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTypeScriptClient: the official TypeScript SDK's client, which no
// one here wrote, lists the broker's tools and calls an allowed and a
// denied one.
func TestTypeScriptClient(t *testing.T) {
	argv := interopCommand(t, "CHECKFU_TEST_MCP_CLIENT")
	r := rigtest.New(t)
	r.Tools = r.Tools[:2]
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	url := httpBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], url, "list_issues", "create_issue")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client failed: %v\n%s", err, stderr.Bytes())
	}
	noLeak(t, "what the TypeScript client saw", out)
	var got struct {
		Tools   []string
		Allowed struct {
			IsError bool
			Text    string
		}
		Denied struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if strings.Join(got.Tools, ",") != "create_issue,list_issues" && strings.Join(got.Tools, ",") != "list_issues,create_issue" {
		t.Errorf("tools %v", got.Tools)
	}
	if got.Allowed.IsError || got.Allowed.Text != `{"issues":[{"n":1}]}` {
		t.Errorf("allowed call %+v", got.Allowed)
	}
	if !got.Denied.IsError || got.Denied.Text != "refused: "+string(authz.CodePermissionMissing) {
		t.Errorf("denied call %+v", got.Denied)
	}
	if r.Hits.Load() != 1 {
		t.Errorf("the provider saw %d requests, want 1 (the allowed call)", r.Hits.Load())
	}
}

// conformanceScenarios are the conformance suite's server scenarios that
// apply to the broker; docs/gateway.md says why the others do not.
var conformanceScenarios = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list", "resources-list", "prompts-list",
	"server-sse-multiple-streams", "dns-rebinding-protection",
}

// TestConformance runs the MCP conformance suite's applicable server
// scenarios against the broker's server side.
func TestConformance(t *testing.T) {
	argv := interopCommand(t, "CHECKFU_TEST_MCP_CONFORMANCE")
	r := rigtest.New(t)
	r.Grant("issues.list")
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	url := httpBroker(t, b)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "server", "--url", url, "--scenario", sc)...)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("scenario %s failed: %v\n%s", sc, err, out)
			}
			noLeak(t, "the conformance run", out)
			t.Logf("%s", out)
		})
	}
}
