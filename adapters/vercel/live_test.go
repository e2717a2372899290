package vercel_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

// TestLive runs one process on the real Vercel Sandbox when VERCEL_TOKEN,
// VERCEL_TEAM_ID and VERCEL_PROJECT_ID are set. Its evidence is
// production. Otherwise it skips: outside CI and in CI alike, since CI
// holds no vendor keys.
//
//	VERCEL_TOKEN=... VERCEL_TEAM_ID=... VERCEL_PROJECT_ID=... go test -run TestLive -v ./adapters/vercel/
func TestLive(t *testing.T) {
	key, team, project := os.Getenv("VERCEL_TOKEN"), os.Getenv("VERCEL_TEAM_ID"), os.Getenv("VERCEL_PROJECT_ID")
	if key == "" || team == "" || project == "" {
		t.Skip("VERCEL_TOKEN, VERCEL_TEAM_ID or VERCEL_PROJECT_ID is not set (CI has no vendor keys, so this also skips in CI): the live Vercel test did not run")
	}
	c, err := vercel.New(vercel.Config{Edge: &vendortest.Edge{Keys: map[string]string{"env:VERCEL_TOKEN": key}}, Credential: "env:VERCEL_TOKEN", TeamID: team, ProjectID: project, Label: checkfu.LabelProduction})
	if err != nil {
		t.Fatal(err)
	}
	s := create(t, c, "checkfu-live", `{"type":"none"}`)
	if r := collect(t, open(t, s, "/bin/sh", "-c", "echo o; echo e >&2; exit 4")); r.stdout != "o\n" || r.stderr != "e\n" || r.status != 4 {
		t.Errorf("live: stdout %q stderr %q status %d err %v", r.stdout, r.stderr, r.status, r.err)
	}
}
