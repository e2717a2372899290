package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// TestSweepGuardDirs: the probe's sweep removes a dead Runner's guard
// socket directory, and nothing it cannot prove is one: a live
// Runner's, one of another mode or owner, a link, or one holding more
// than the socket.
func TestSweepGuardDirs(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := strconv.Itoa(dead.Process.Pid)
	livePid := strconv.Itoa(os.Getpid())
	var made []string
	files := map[string][]string{} // what each directory was made holding
	t.Cleanup(func() {
		for _, d := range made {
			os.RemoveAll(d)
		}
	})
	mk := func(pid, tag string, mode os.FileMode, names ...string) string {
		t.Helper()
		dir := filepath.Join(os.TempDir(), guardDirPrefix+pid+"-sweeptest"+tag)
		made = append(made, dir)
		files[dir] = names
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range names {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	swept := mk(deadPid, "a", 0o700, "guard.sock")
	empty := mk(deadPid, "b", 0o700)
	kept := map[string]string{
		"a live Runner's":          mk(livePid, "c", 0o700, "guard.sock"),
		"one of mode 0755":         mk(deadPid, "d", 0o755, "guard.sock"),
		"one holding more":         mk(deadPid, "e", 0o700, "guard.sock", "other"),
		"one holding another name": mk(deadPid, "f", 0o700, "notes"),
	}
	target := mk(livePid, "g", 0o700)
	link := filepath.Join(os.TempDir(), guardDirPrefix+deadPid+"-sweeptesth")
	made = append(made, link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	kept["a link"] = link
	if os.Geteuid() == 0 {
		other := mk(deadPid, "i", 0o700, "guard.sock")
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		kept["another user's"] = other
	}

	// The probe every New runs sweeps them.
	cgroupsWritable()

	for _, d := range []string{swept, empty} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("a dead Runner's guard directory %s was not swept (%v)", d, err)
		}
	}
	for what, d := range kept {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s guard directory %s was swept: %v", what, d, err)
		}
		for _, f := range files[d] {
			if _, err := os.Lstat(filepath.Join(d, f)); err != nil {
				t.Errorf("%s guard directory %s lost %s: %v", what, d, f, err)
			}
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target was removed: %v", err)
	}
}

// TestGuardDirNamesItsRunner: a guard's socket directory carries the
// Runner's pid, which is what lets a later probe sweep it once that
// Runner is dead.
func TestGuardDirNamesItsRunner(t *testing.T) {
	sock, stop, err := LocalGuard(GuardOptions{})(context.Background(), []egress.HostPort{{Host: "allowed.test", Port: 80}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	want := guardDirPrefix + strconv.Itoa(os.Getpid()) + "-"
	if dir := filepath.Base(filepath.Dir(sock)); !strings.HasPrefix(dir, want) {
		t.Fatalf("the guard's socket directory is %s, want a name beginning %s", dir, want)
	}
}
