//go:build unix

package process

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/internal/sweeptest"
)

// sweepTmp makes a fresh temporary directory the sweep's TMPDIR for
// the test, and returns it with the owner name (deadowner) of a dead
// pid of this PID namespace. Without a namespace to read, the sweep
// removes nothing, and the test is skipped.
func sweepTmp(t *testing.T) (tmp, deadOwner string) {
	t.Helper()
	tmp = sweeptest.TempDir(t, 0o700)
	t.Cleanup(func() { sweepRaceForTest = nil })
	return tmp, sweeptest.DeadOwner(t)
}

// victimTree makes, outside the temporary directory, a tree as mkTree
// does for a sweep to leave alone, and returns it.
func victimTree(t *testing.T) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	mkTree(t, victim)
	t.Cleanup(func() { os.Chmod(filepath.Join(victim, "ro"), 0o700) })
	return victim
}

// mkTree makes dir (mode 0700) holding a file, a nested directory with
// a file, and a directory a workload made read-only.
func mkTree(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Join(dir, "a", "b"), filepath.Join(dir, "ro")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "ro"), 0o500); err != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestSweepOwnerHelper is the owner TestSweepRemovesAKilledOwnersDirectory
// kills: it makes an instance, fills its directory, prints the path and
// waits to be killed. It does nothing in a normal run.
func TestSweepOwnerHelper(t *testing.T) {
	if os.Getenv("CHECKFU_PROCESS_SWEEP_OWNER") != "1" {
		t.Skip("run by TestSweepRemovesAKilledOwnersDirectory")
	}
	inst, err := New().Create(context.Background(), Spec("owner", ""))
	if err != nil {
		t.Fatal(err)
	}
	dir := inst.(*instance).dir
	mkTree(t, dir)
	fmt.Println(dir)
	select {}
}

// TestSweepRemovesAKilledOwnersDirectory: an owner killed outright
// (SIGKILL: no Destroy ran) leaves its instance directory; the next
// process's first Create sweeps it, tree and all, and keeps a live
// owner's: its own, and another running process's.
func TestSweepRemovesAKilledOwnersDirectory(t *testing.T) {
	tmp, _ := sweepTmp(t)
	owner := exec.Command(os.Args[0], "-test.run=^TestSweepOwnerHelper$")
	owner.Env = append(os.Environ(), "CHECKFU_PROCESS_SWEEP_OWNER=1")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	owner.Process.Kill()
	owner.Wait()
	if err != nil {
		t.Fatalf("the owner printed no directory: %v", err)
	}
	killed := strings.TrimSpace(line)
	want := filepath.Join(tmp, dirPrefix+deadowner.Name(owner.Process.Pid)+"-")
	if !strings.HasPrefix(killed, want) || !exists(t, filepath.Join(killed, "ro", "f")) {
		t.Fatalf("the killed owner's directory is %q, want a full one named %s*", killed, want)
	}

	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Wait()
	defer live.Process.Kill()
	other := filepath.Join(tmp, dirPrefix+deadowner.Name(live.Process.Pid)+"-live")
	mkTree(t, other)
	defer os.Chmod(filepath.Join(other, "ro"), 0o700)

	ctx := context.Background()
	sweepOnce.Do(func() {}) // as if this process had made an instance before
	inst, err := New().Create(ctx, Spec("later", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx)
	mine := inst.(*instance).dir
	if err := os.WriteFile(filepath.Join(mine, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !exists(t, killed) {
		t.Fatal("a Create other than the process's first swept")
	}

	// As in a fresh process: its first Create sweeps.
	sweepOnce = sync.Once{}
	inst2, err := New().Create(ctx, Spec("live", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst2.Destroy(ctx)

	if exists(t, killed) {
		t.Errorf("the killed owner's directory %s was not swept", killed)
	}
	if !exists(t, filepath.Join(other, "ro", "f")) {
		t.Errorf("a running owner's directory %s was swept", other)
	}
	if !exists(t, filepath.Join(mine, "f")) {
		t.Errorf("this process's own instance directory %s was swept", mine)
	}
}

// TestSweepNeverLeavesTheDirectory: links a workload left in a dead
// owner's directory, to a directory and to a file outside it, are
// removed as links; a link at a swept name is never followed; the
// targets are untouched.
func TestSweepNeverLeavesTheDirectory(t *testing.T) {
	tmp, dead := sweepTmp(t)
	victim := victimTree(t)

	dir := filepath.Join(tmp, dirPrefix+dead+"-links")
	mkTree(t, dir)
	for name, target := range map[string]string{"dirlink": victim, "filelink": filepath.Join(victim, "f"), "a/b/up": filepath.Dir(victim)} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(tmp, dirPrefix+dead+"-named")
	if err := os.Symlink(victim, named); err != nil {
		t.Fatal(err)
	}

	sweepDirs()

	if exists(t, dir) {
		t.Errorf("the dead owner's directory %s was not swept", dir)
	}
	if !exists(t, named) {
		t.Errorf("the link %s at a swept name was removed", named)
	}
	for _, p := range []string{"f", "a/b/f", "ro/f"} {
		if !exists(t, filepath.Join(victim, p)) {
			t.Errorf("%s outside the swept directory was removed", p)
		}
	}
}

// TestSweepRace: a dead owner's directory swapped for a link to another
// directory after the sweep's checks costs that directory nothing: the
// sweep empties the directory it checked, and removes no link.
func TestSweepRace(t *testing.T) {
	tmp, dead := sweepTmp(t)
	victim := victimTree(t)
	dir := filepath.Join(tmp, dirPrefix+dead+"-race")
	mkTree(t, dir)
	sweepRaceForTest = sweeptest.Swap(t, dir, victim)

	sweepDirs()

	if !exists(t, dir) {
		t.Errorf("the link swapped in at %s was removed", dir)
	}
	for _, p := range []string{"f", "a/b/f", "ro/f"} {
		if !exists(t, filepath.Join(victim, p)) {
			t.Errorf("%s behind the swapped name was removed", p)
		}
		if exists(t, filepath.Join(dir+"-moved", p)) {
			t.Errorf("%s in the directory checked was kept", p)
		}
	}
}

// TestSweepKeepsWhatIsNotOurs: a dead pid's name on a directory others
// may write in, or on one another user owns, proves nothing: kept.
func TestSweepKeepsWhatIsNotOurs(t *testing.T) {
	tmp, dead := sweepTmp(t)
	open := filepath.Join(tmp, dirPrefix+dead+"-open")
	mkTree(t, open)
	defer os.Chmod(filepath.Join(open, "ro"), 0o700)
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(tmp, dirPrefix+dead+"-theirs")
	mkTree(t, theirs)
	defer os.Chmod(filepath.Join(theirs, "ro"), 0o700)
	chowned := os.Geteuid() == 0 && os.Chown(theirs, 65534, 65534) == nil

	sweepDirs()

	if !exists(t, filepath.Join(open, "f")) {
		t.Errorf("a directory others may write in, %s, was swept", open)
	}
	if chowned && !exists(t, filepath.Join(theirs, "f")) {
		t.Errorf("another user's directory %s was swept", theirs)
	}
}

// TestSweepDepth: a tree maxSweepDepth levels deep (the swept directory
// is level 1) is swept whole; one level deeper, the sweep leaves the
// deepest part and so the directory.
func TestSweepDepth(t *testing.T) {
	tmp, dead := sweepTmp(t)
	chain := func(name string, depth int) (top, deepest string) {
		top = filepath.Join(tmp, dirPrefix+dead+"-"+name)
		deepest = top + strings.Repeat("/d", depth-1)
		if err := os.MkdirAll(deepest, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(deepest, "f"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return top, deepest
	}
	atBound, _ := chain("at", maxSweepDepth)
	past, pastDeepest := chain("past", maxSweepDepth+1)

	sweepDirs()

	if exists(t, atBound) {
		t.Errorf("a tree %d levels deep was not swept", maxSweepDepth)
	}
	if !exists(t, filepath.Join(pastDeepest, "f")) || !exists(t, past) {
		t.Errorf("a tree %d levels deep was swept past the bound", maxSweepDepth+1)
	}
}

// TestSweepSkipsOtherNames: names that do not carry an owner, names of
// earlier revisions (a pid without its namespace) and pids that are not
// numbers are never swept.
func TestSweepSkipsOtherNames(t *testing.T) {
	tmp, dead := sweepTmp(t)
	pid, _, _ := deadowner.Parse(dead)
	var kept []string
	for _, name := range []string{dirPrefix + "123456789", dirPrefix + "x" + dead + "-y", dirPrefix + "-" + dead, dirPrefix + "0-z",
		dirPrefix + strconv.Itoa(pid) + "-old"} {
		dir := filepath.Join(tmp, name)
		mkTree(t, dir)
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ro"), 0o700) })
		kept = append(kept, dir)
	}
	sweepDirs()
	for _, dir := range kept {
		if !exists(t, filepath.Join(dir, "f")) {
			t.Errorf("%s was swept", filepath.Base(dir))
		}
	}
}

// TestSweepKeepsAnotherNamespacesOwner: a Runner in another PID
// namespace sharing the temporary directory (another container
// bind-mounting the host's /tmp) names its directories with its own
// namespace; its pid, read here, proves nothing, so its directory is
// kept even where no process here has that pid. The control: the same
// dead pid in this namespace is swept.
func TestSweepKeepsAnotherNamespacesOwner(t *testing.T) {
	tmp, dead := sweepTmp(t)
	pid, ns, _ := deadowner.Parse(dead)
	theirs := filepath.Join(tmp, dirPrefix+deadowner.Format(pid, ns+1)+"-theirs")
	mkTree(t, theirs)
	defer os.Chmod(filepath.Join(theirs, "ro"), 0o700)
	ours := filepath.Join(tmp, dirPrefix+dead+"-ours")
	mkTree(t, ours)

	sweepDirs()

	if !exists(t, filepath.Join(theirs, "ro", "f")) {
		t.Errorf("the directory %s of an owner in another PID namespace was swept", theirs)
	}
	if exists(t, ours) {
		t.Errorf("control: the dead owner's directory %s of this namespace was not swept", ours)
	}
}
