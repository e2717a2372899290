package mount

import (
	"os"
	"path/filepath"
	"testing"
)

// Two sources backed by the same host directory, or one inside the other
// (also when a Dir reaches it through a symlink), would let a write
// through one mount change what the other serves: a writable project tree
// holding the read-only memory directory lets the agent rewrite its own
// memory. Such plans are refused like overlapping targets.
func TestAttachRefusesOverlappingSources(t *testing.T) {
	f := newFixture(t)
	nested := filepath.Join(f.root, "src")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(nested, link); err != nil {
		t.Fatal(err)
	}
	rw := Mount{Name: "p", Kind: ProjectTree, Target: "/p", Writable: true}
	ro := Mount{Name: "m", Kind: MemoryDir, Target: "/m"}
	for name, dirs := range map[string][2]string{
		"same":                 {f.root, f.root},
		"same, spelled apart":  {f.root, f.root + "/./src/.."},
		"inner second":         {f.root, nested},
		"inner first":          {nested, f.root},
		"inner through a link": {f.root, link},
	} {
		_, err := f.r.Attach("s2", f.lease.ID, scope, Source{Mount: rw, Dir: dirs[0]}, Source{Mount: ro, Dir: dirs[1]})
		if err == nil {
			f.r.Detach("s2")
		}
		t.Run(name, func(t *testing.T) { wantCode(t, err, CodePlanInvalid) })
	}
	// Siblings are fine.
	if _, err := f.r.Attach("s2", f.lease.ID, scope, Source{Mount: rw, Dir: f.root}, Source{Mount: ro, Dir: f.outside}); err != nil {
		t.Fatalf("sibling directories refused: %v", err)
	}
	f.r.Detach("s2")
}
