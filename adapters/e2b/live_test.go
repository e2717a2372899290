package e2b_test

import (
	"context"
	"os"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestLive runs one process on the real E2B when E2B_API_KEY is set
// (E2B_TEMPLATE picks the template; "base" by default). Its evidence is
// production. Without the key it skips: outside CI and in CI alike,
// since CI holds no vendor keys.
//
//	E2B_API_KEY=... go test -run TestLive -v ./adapters/e2b/
func TestLive(t *testing.T) {
	key := os.Getenv("E2B_API_KEY")
	if key == "" {
		t.Skip("E2B_API_KEY is not set (CI has no vendor keys, so this also skips in CI): the live E2B test did not run")
	}
	tmpl := os.Getenv("E2B_TEMPLATE")
	if tmpl == "" {
		tmpl = "base"
	}
	c, err := e2b.New(e2b.Config{Edge: &vendortest.Edge{Keys: map[string]string{"env:E2B_API_KEY": key}}, Credential: "env:E2B_API_KEY", Template: tmpl, Label: checkfu.LabelProduction})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: "checkfu-live", Policy: vendortest.Compiled(t, `{"type":"none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy(context.Background())
	r := run(t, s, []byte("live\n"), "/bin/sh", "-c", "cat; echo e >&2; exit 4")
	if string(r.stdout) != "live\n" || string(r.stderr) != "e\n" || r.status != 4 {
		t.Errorf("live: stdout %q stderr %q status %d err %v", r.stdout, r.stderr, r.status, r.err)
	}
}
