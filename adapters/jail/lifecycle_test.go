//go:build linux

package jail_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/jail"
)

// cgroupParents are the cgroup v1 directories the jails of the Runner
// pid make their groups in: one per controller.
func cgroupParents(pid int) []string {
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		out = append(out, "/sys/fs/cgroup/"+ctrl+"/checkfu-jail-"+deadowner.Name(pid))
	}
	return out
}

// TestDestroyRemovesCgroups starts a jail whose workload forks, sees its
// groups on the host, destroys the instance and finds neither its
// groups nor this Runner's parent groups left.
func TestDestroyRemovesCgroups(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if !p.Support().Cgroups {
		t.Skip("no writable cgroup v1 hierarchy: the jail makes no group")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("cgroup-cleanup", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "/bin/sleep 1000 & echo started; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(proc.Stdout()).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("the workload did not start: %q, %v", line, err)
	}
	if got := groupsOf(t, os.Getpid(), "cgroup-cleanup"); len(got) != 3 {
		t.Fatalf("control: the running jail's groups %v, want one in each of %v", got, cgroupParents(os.Getpid()))
	}
	if err := inst.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dir := range cgroupParents(os.Getpid()) {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s outlived Destroy (%v); holding %v", dir, err, groupsOf(t, os.Getpid(), ""))
		}
	}
}

// groupsOf lists the group directories of the jails of Runner pid for
// instance id ("" for any).
func groupsOf(t *testing.T, pid int, id string) []string {
	t.Helper()
	var out []string
	for _, dir := range cgroupParents(pid) {
		pat := filepath.Join(dir, id+"-*")
		if id == "" {
			pat = filepath.Join(dir, "*")
		}
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range m {
			if fi, err := os.Stat(g); err == nil && fi.IsDir() {
				out = append(out, g)
			}
		}
	}
	return out
}

// parentArg makes the test binary act as a Runner that starts one jail,
// prints the jail's host pid and blocks until it is killed.
const parentArg = "checkfu-jail-parent"

// parentMain runs when the test binary is started with parentArg.
func parentMain() {
	if len(os.Args) < 2 || os.Args[1] != parentArg {
		return
	}
	if err := runParent(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	io.Copy(io.Discard, os.Stdin) // until the test kills this process
	os.Exit(0)
}

func runParent() error {
	p, err := jail.New(jail.ConfigForTest(jail.Config{})) // the init stage of the test's pass, from the environment
	if err != nil {
		return err
	}
	ctx := context.Background()
	inst, err := p.Create(ctx, p.Spec("parent-death", testDigest))
	if err != nil {
		return err
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo started; exec /bin/sleep 1000"}})
	if err != nil {
		return err
	}
	if line, err := bufio.NewReader(proc.Stdout()).ReadString('\n'); err != nil || line != "started\n" {
		return fmt.Errorf("the workload did not start: %q, %v", line, err)
	}
	// The jail is the only child of this process: its init stage, which
	// became the workload.
	var kids []string
	for _, task := range mustTasks() {
		c, _ := os.ReadFile("/proc/self/task/" + task + "/children")
		kids = append(kids, strings.Fields(string(c))...)
	}
	if len(kids) != 1 {
		return fmt.Errorf("%d children, want the jail alone", len(kids))
	}
	fmt.Println(kids[0])
	return nil
}

func mustTasks() []string {
	ents, _ := os.ReadDir("/proc/self/task")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestParentDeathEndsTheJail kills a Runner (the test binary in
// parentArg mode) with SIGKILL, so nothing of its own code runs, and
// sees its jail end: the kernel's parent-death signal, not Destroy.
// It waits on a pidfd of the jail taken while the Runner lived, so a
// reused pid cannot answer for it.
func TestParentDeathEndsTheJail(t *testing.T) {
	p := newProvider(t, jail.Config{}) // skips (or fails in CI) without the kernel's support
	cmd := exec.Command(os.Args[0], parentArg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// The dead Runner's instance is released by the next probe's sweep,
	// which the test reaches on its passing path only: on every other,
	// the test releases it itself once the Runner is dead (the deferred
	// kill runs first).
	t.Cleanup(func() {
		prefix := filepath.Join(os.TempDir(), "checkfu-jail-"+deadowner.Name(cmd.Process.Pid)+"-")
		for _, m := range mountsUnder(t, prefix) {
			unix.Unmount(m, unix.MNT_DETACH)
		}
		dirs, _ := filepath.Glob(prefix + "*")
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the Runner did not report its jail: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the Runner: %s", strings.TrimSpace(line))
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	// Control: the pidfd is the Runner's child, alive.
	if ppid := statusField(t, pid, "PPid"); ppid != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("control: pid %d's parent is %s, not the Runner %d", pid, ppid, cmd.Process.Pid)
	}
	if exited(t, pidfd, 0) {
		t.Fatal("control: the jail ended before its Runner")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// A bound on a hung kernel, not a timing assertion: the signal is
	// sent as the Runner exits.
	if !exited(t, pidfd, 30*time.Second) {
		// What the kernel says of the jail, for whoever reads the failure.
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		wchan, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/wchan")
		stack, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stack")
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		t.Fatalf("the jail outlived its Runner by 30 s\nstatus:\n%s\nwchan: %s\nstack:\n%s", status, wchan, stack)
	}
	// The dead Runner's groups are swept by the next provider's probe.
	if !p.Support().Cgroups {
		return
	}
	if got := groupsOf(t, cmd.Process.Pid, ""); len(got) != 3 {
		t.Fatalf("control: the dead Runner left groups %v, want one per controller", got)
	}
	// And its bounded workspace, a tmpfs mounted on the host.
	prefix := filepath.Join(os.TempDir(), "checkfu-jail-"+deadowner.Name(cmd.Process.Pid)+"-")
	if got := mountsUnder(t, prefix); len(got) != 1 {
		t.Fatalf("control: the dead Runner left workspace mounts %v, want 1", got)
	}
	jail.Probe()
	for _, dir := range cgroupParents(cmd.Process.Pid) {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dead Runner's %s outlived the next probe (%v)", dir, err)
		}
	}
	if got := mountsUnder(t, prefix); len(got) != 0 {
		t.Errorf("the dead Runner's workspace %v outlived the next probe", got)
		for _, m := range got { // the test stops what it started
			unix.Unmount(m, unix.MNT_DETACH)
			os.RemoveAll(filepath.Dir(m))
		}
	}
	if dirs, _ := filepath.Glob(prefix + "*"); len(dirs) != 0 {
		t.Errorf("the dead Runner's instance directories %v outlived the next probe", dirs)
	}
}

// mountsUnder returns the mount points of this mount namespace that
// begin with prefix.
func mountsUnder(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], prefix) {
			out = append(out, f[4])
		}
	}
	return out
}

// exited polls pidfd for the process's exit, for at most d.
func exited(t *testing.T, pidfd int, d time.Duration) bool {
	t.Helper()
	for {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
}

// statusField is one field of /proc/pid/status.
func statusField(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
