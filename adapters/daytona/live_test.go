package daytona_test

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestLive runs one process on the real Daytona when DAYTONA_API_KEY is
// set (DAYTONA_API_URL overrides the API). Its evidence is production.
// Without the key it skips: outside CI and in CI alike, since CI holds
// no vendor keys.
//
//	DAYTONA_API_KEY=... go test -run TestLive -v ./adapters/daytona/
func TestLive(t *testing.T) {
	key := os.Getenv("DAYTONA_API_KEY")
	if key == "" {
		t.Skip("DAYTONA_API_KEY is not set (CI has no vendor keys, so this also skips in CI): the live Daytona test did not run")
	}
	c, err := daytona.New(daytona.Config{Edge: &vendortest.Edge{Keys: map[string]string{"env:DAYTONA_API_KEY": key}}, Credential: "env:DAYTONA_API_KEY", BaseURL: os.Getenv("DAYTONA_API_URL"), Label: checkfu.LabelProduction})
	if err != nil {
		t.Fatal(err)
	}
	s := create(t, c, "checkfu-live")
	p := open(t, s, "/bin/sh", "-c", "read a; echo \"$a\"; echo e >&2; exit 4")
	if r := collect(t, p, "live\n"); r.stdout != "live\n" || r.stderr != "e\n" || r.status != 4 {
		t.Errorf("live: stdout %q stderr %q status %d err %v", r.stdout, r.stderr, r.status, r.err)
	}
}
