package sweeptest

import (
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/deadowner"
)

// DeadOwner returns the owner name of a process of this PID namespace
// that has exited and been reaped. It skips the test when this process
// cannot read its PID namespace: then no owner is dead.
func DeadOwner(t testing.TB) string {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if _, ok := deadowner.Namespace(); !ok {
		t.Skip("no PID namespace to read: the sweep removes nothing")
	}
	return deadowner.Name(dead.Process.Pid)
}

// TempDir makes a fresh directory of mode the temporary directory
// (TMPDIR) for the rest of the test, and returns it. Mode 0777, no
// sticky bit, is a directory anyone may rename in: the setting in which
// a local user can swap a dead owner's directory for a link between a
// sweep's checks and its removal.
func TempDir(t testing.TB, mode os.FileMode) string {
	t.Helper()
	tmp := t.TempDir()
	if err := os.Chmod(tmp, mode); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// Swap returns a racer for a sweep's test hook, which the sweep calls
// with a directory's path between its checks and the removal: at dir,
// the first time, the racer renames dir to dir+"-moved" and puts at its
// name a link to target, as a local user may in a shared directory. It
// does nothing at any other path or time.
func Swap(t testing.TB, dir, target string) func(string) {
	var once sync.Once
	return func(d string) {
		if d != dir {
			return
		}
		once.Do(func() {
			if err := os.Rename(dir, dir+"-moved"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(target, dir); err != nil {
				t.Error(err)
			}
		})
	}
}
