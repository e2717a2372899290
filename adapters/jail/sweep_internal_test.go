//go:build linux

package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/internal/sweeptest"
	"github.com/checkfu/checkfu/egress"
	"golang.org/x/sys/unix"
)

// TestSweepGuardDirs: the probe's sweep removes a dead Runner's guard
// socket directory, and nothing it cannot prove is one: a live
// Runner's, one of a Runner in another PID namespace (whose pid means
// nothing here), one named by an earlier revision (a pid alone), one of
// another mode or owner, a link, or one holding more than the socket.
func TestSweepGuardDirs(t *testing.T) {
	deadPid := sweeptest.DeadOwner(t)
	pid, ns, _ := deadowner.Parse(deadPid)
	livePid := deadowner.Self()
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
		"another PID namespace's":  mk(deadowner.Format(pid, ns+1), "j", 0o700, "guard.sock"),
		"a pid-only (old) name's":  mk(strconv.Itoa(pid), "k", 0o700, "guard.sock"),
		"one of mode 0755":         mk(deadPid, "d", 0o755, "guard.sock"),
		"one holding more":         mk(deadPid, "e", 0o700, "guard.sock", "other"),
		"one holding another name": mk(deadPid, "f", 0o700, "notes"),
	}
	target := mk(livePid, "g", 0o700, "guard.sock")
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
	if _, err := os.Lstat(filepath.Join(target, "guard.sock")); err != nil {
		t.Errorf("the link's target lost its socket: %v", err)
	}
}

// TestGuardDirNamesItsRunner: a guard's socket directory carries the
// Runner's owner name (pid and PID namespace), which is what lets a later probe sweep it once that
// Runner is dead.
func TestGuardDirNamesItsRunner(t *testing.T) {
	sock, stop, err := LocalGuard(GuardOptions{})(context.Background(), []egress.HostPort{{Host: "allowed.test", Port: 80}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	want := guardDirPrefix + deadowner.Self() + "-"
	if dir := filepath.Base(filepath.Dir(sock)); !strings.HasPrefix(dir, want) {
		t.Fatalf("the guard's socket directory is %s, want a name beginning %s", dir, want)
	}
}

// sharedTmp makes a temporary directory anyone may rename in (mode
// 0777, no sticky bit) the sweeps' TMPDIR for the test, and returns the
// owner name of a dead pid of this PID namespace: the setting in which a local user can swap a dead Runner's
// directory for a link between the sweep's checks and its removal.
func sharedTmp(t *testing.T) (tmp, deadPid string) {
	t.Helper()
	tmp = sweeptest.TempDir(t, 0o777)
	t.Cleanup(func() { sweepRaceForTest = nil })
	return tmp, sweeptest.DeadOwner(t)
}

// TestSweepGuardDirsRace: a dead Runner's guard directory swapped for a
// link to a live Runner's, after the sweep's checks and before its
// removal, costs the live guard nothing: the socket the sweep removes
// is the one in the directory it checked.
func TestSweepGuardDirsRace(t *testing.T) {
	tmp, deadPid := sharedTmp(t)
	mk := func(pid, tag string) string {
		t.Helper()
		dir := filepath.Join(tmp, guardDirPrefix+pid+"-"+tag)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "guard.sock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	deadDir := mk(deadPid, "dead")
	live := mk(deadowner.Self(), "live")
	sweepRaceForTest = sweeptest.Swap(t, deadDir, live)

	sweepGuardDirs()

	if _, err := os.Lstat(filepath.Join(live, "guard.sock")); err != nil {
		t.Errorf("the live Runner's guard socket, behind the swapped name: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(deadDir+"-moved", "guard.sock")); !os.IsNotExist(err) {
		t.Errorf("the dead Runner's guard socket, in the directory checked: %v, want it removed", err)
	}
}

// TestSweepWorkspacesRace: a dead Runner's workspace directory swapped
// for a link to a live Runner's, after the sweep's checks and before
// its unmount, leaves the live workspace mounted: the sweep unmounts
// the one in the directory it checked.
func TestSweepWorkspacesRace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	tmp, deadPid := sharedTmp(t)
	deadDir := mountWorkspace(t, tmp, deadPid, "dead")
	live := mountWorkspace(t, tmp, deadowner.Self(), "live")
	t.Cleanup(func() { unix.Unmount(filepath.Join(deadDir+"-moved", "workspace"), unix.MNT_DETACH) })
	sweepRaceForTest = sweeptest.Swap(t, deadDir, live)

	sweepWorkspaces()

	if !isMountPoint(t, filepath.Join(live, "workspace")) {
		t.Errorf("the live Runner's workspace, behind the swapped name, was unmounted")
	}
	if isMountPoint(t, filepath.Join(deadDir+"-moved", "workspace")) {
		t.Errorf("the dead Runner's workspace, in the directory checked, is still mounted")
	}
	if fi, err := os.Lstat(deadDir); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link put at the dead Runner's name: %v, want it kept", err)
	}
}

// isMountPoint reports whether path is a mount point in this process's
// mount table.
func isMountPoint(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[4] == path {
			return true
		}
	}
	return false
}

// TestSweepSwapNeedsAnUnstickyTmp: the swap the race tests make is open
// to another user only where the temporary directory lets others rename
// (the control: mode 0777); in a sticky one (/tmp's mode 1777) a local
// user cannot rename a root Runner's directory away, so there the name
// the sweep checked stays the directory it checked.
func TestSweepSwapNeedsAnUnstickyTmp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	for _, c := range []struct {
		mode  os.FileMode
		swaps bool
	}{{0o777, true}, {0o777 | os.ModeSticky, false}} {
		tmp := t.TempDir()
		if err := os.Chmod(filepath.Dir(tmp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(tmp, c.mode); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, guardDirPrefix+"1-x")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		mv := exec.Command("mv", "-T", dir, dir+"-moved")
		mv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := mv.CombinedOutput()
		if swapped := err == nil; swapped != c.swaps {
			t.Errorf("tmp of mode %v: another user renamed the Runner's directory: %t (%v, %s), want %t", c.mode, swapped, err, out, c.swaps)
		}
	}
}

// mountWorkspace makes tmp/checkfu-jail-OWNER-tag/workspace, a tmpfs,
// as a Runner named owner would, and unmounts it when the test ends.
func mountWorkspace(t *testing.T, tmp, owner, tag string) string {
	t.Helper()
	dir := filepath.Join(tmp, instanceDirPrefix+owner+"-"+tag)
	ws := filepath.Join(dir, "workspace")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", ws, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(ws, unix.MNT_DETACH) })
	return dir
}

// TestSweepWorkspacesKeepAnotherNamespace: the workspace of a Runner
// in another PID namespace sharing TMPDIR (another container
// bind-mounting the host's /tmp) stays mounted, though no process here
// has its pid; so does one named by an earlier revision (a pid alone).
// The control: the same dead pid in this namespace is swept.
func TestSweepWorkspacesKeepAnotherNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	tmp, dead := sharedTmp(t)
	pid, ns, _ := deadowner.Parse(dead)
	theirs := mountWorkspace(t, tmp, deadowner.Format(pid, ns+1), "theirs")
	old := mountWorkspace(t, tmp, strconv.Itoa(pid), "old")
	ours := mountWorkspace(t, tmp, dead, "ours")

	sweepWorkspaces()

	for what, dir := range map[string]string{"another PID namespace's": theirs, "a pid-only (old) name's": old} {
		if !isMountPoint(t, filepath.Join(dir, "workspace")) {
			t.Errorf("%s workspace %s was unmounted", what, dir)
		}
	}
	if isMountPoint(t, filepath.Join(ours, "workspace")) {
		t.Errorf("control: the dead Runner's workspace %s of this namespace is still mounted", ours)
	}
}

// TestSweepOrphansKeepAnotherNamespace: the cgroup parent of a Runner
// in another PID namespace sharing the cgroup tree keeps its groups,
// though no process here has its pid; so does one named by an earlier
// revision (a pid alone). The control: the same dead pid in this
// namespace is swept.
func TestSweepOrphansKeepAnotherNamespace(t *testing.T) {
	pid, ns, _ := deadowner.Parse(sweeptest.DeadOwner(t))
	mk := func(owner string) []string {
		t.Helper()
		var groups []string
		for _, ctrl := range controllers {
			parent := filepath.Join(cgroupRoot, ctrl, cgroupPrefix+owner)
			g := filepath.Join(parent, "sweeptest-1")
			if err := os.Mkdir(parent, 0o755); err != nil {
				t.Skipf("no writable cgroup v1 hierarchy: %v", err)
			}
			t.Cleanup(func() { os.Remove(g); os.Remove(parent) })
			if err := os.Mkdir(g, 0o755); err != nil {
				t.Fatal(err)
			}
			groups = append(groups, g)
		}
		return groups
	}
	theirs := mk(deadowner.Format(pid, ns+1))
	old := mk(strconv.Itoa(pid))
	ours := mk(deadowner.Name(pid))

	sweepOrphans()

	for _, g := range append(theirs, old...) {
		if _, err := os.Stat(g); err != nil {
			t.Errorf("the group %s of another PID namespace, or of an old name, was swept: %v", g, err)
		}
	}
	for _, g := range ours {
		if _, err := os.Stat(filepath.Dir(g)); !os.IsNotExist(err) {
			t.Errorf("control: the dead Runner's parent %s of this namespace was not swept: %v", filepath.Dir(g), err)
		}
	}
}
