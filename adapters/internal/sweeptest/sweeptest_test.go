package sweeptest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/deadowner"
)

// TestDeadOwner: the name is one Dead reports true for.
func TestDeadOwner(t *testing.T) {
	if name := DeadOwner(t); !deadowner.Dead(name) {
		t.Errorf("DeadOwner() = %q, which Dead reports alive", name)
	}
}

// TestTempDir: the directory has the mode asked for and is the
// temporary directory for the test.
func TestTempDir(t *testing.T) {
	for _, mode := range []os.FileMode{0o700, 0o777} {
		tmp := TempDir(t, mode)
		if got := os.TempDir(); got != tmp {
			t.Errorf("os.TempDir() = %q, want %q", got, tmp)
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("TempDir(%v) has mode %v", mode, got)
		}
	}
}

// TestSwap: the racer swaps the one directory it is given for a link,
// once, and leaves every other path alone.
func TestSwap(t *testing.T) {
	tmp := t.TempDir()
	dir, other, target := filepath.Join(tmp, "dir"), filepath.Join(tmp, "other"), filepath.Join(tmp, "target")
	for _, d := range []string{dir, other, target} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	race := Swap(t, dir, target)
	race(other)
	if fi, err := os.Lstat(other); err != nil || !fi.IsDir() {
		t.Fatalf("the racer touched another path: %v", err)
	}
	race(dir)
	race(dir) // a second call would fail to rename the link onto dir-moved
	if link, err := os.Readlink(dir); err != nil || link != target {
		t.Errorf("Readlink(%s) = %q, %v; want %q", dir, link, err, target)
	}
	if fi, err := os.Lstat(dir + "-moved"); err != nil || !fi.IsDir() {
		t.Errorf("the directory checked was not moved aside: %v", err)
	}
}
