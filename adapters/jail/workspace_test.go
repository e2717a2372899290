//go:build linux

package jail_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
	"golang.org/x/sys/unix"
)

// TestWorkspaceIsBounded: with the resources axis, a jail's workspace
// holds Config.WorkspaceBytes and not one byte more, whatever the
// jail's memory limit; what one jail wrote is there for the instance's
// next jail; and Destroy leaves neither the mount nor the directory.
func TestWorkspaceIsBounded(t *testing.T) {
	const size = 8 << 20
	p := newProvider(t, jail.Config{WorkspaceBytes: size})
	if !p.Support().Cgroups {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the jail with writable cgroups")
		}
		t.Skip("no writable cgroup v1 hierarchy: the workspace is a plain directory")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("workspace-bound", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	ws := jail.WorkspacePath
	sh := func(script string) (bool, string) {
		return runIn(t, inst, []string{"/bin/sh", "-c", script})
	}
	if ok, msg := sh("head -c " + strconv.Itoa(size) + " /dev/zero > " + ws + "/full && echo written"); !ok || msg != "written" {
		t.Fatalf("control: %d bytes in the workspace: %t %q", size, ok, msg)
	}
	if ok, msg := sh("printf x >> " + ws + "/full 2>/dev/null && echo written"); ok {
		t.Fatalf("the workspace took a byte past its %d: %q", size, msg)
	}
	if ok, msg := sh("printf x > " + ws + "/more 2>/dev/null && echo written"); ok {
		t.Fatalf("a full workspace took a new file: %q", msg)
	}
	// The next jail of the instance sees the workspace the first filled;
	// freeing it makes room again.
	if ok, msg := sh("wc -c < " + ws + "/full && rm " + ws + "/full && printf x > " + ws + "/more && echo written"); !ok || !strings.HasSuffix(msg, "written") || !strings.HasPrefix(msg, strconv.Itoa(size)) {
		t.Fatalf("the next jail: %t %q", ok, msg)
	}
	dir := instanceDir(t, "more", "x")
	derr := inst.Destroy(ctx)
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), dir) {
		t.Errorf("Destroy left the workspace mounted under %s", dir)
		unix.Unmount(filepath.Join(dir, "workspace"), unix.MNT_DETACH) // the test stops what it started
		os.RemoveAll(dir)
	}
	if derr != nil {
		t.Fatal(derr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Destroy left %s: %v", dir, err)
	}
}

// TestNewRefusesNegativeWorkspace: a negative workspace size is a
// configuration error.
func TestNewRefusesNegativeWorkspace(t *testing.T) {
	if _, err := jail.New(jail.Config{WorkspaceBytes: -1}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("New with a workspace of -1 bytes: %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// instanceDir returns the host directory (checkfu-jail-*) of the one
// instance whose mounted workspace holds file name with content, as the
// host's mount table and file system show it: other test binaries may
// have instances of their own.
func instanceDir(t *testing.T, name, content string) string {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || filepath.Base(f[4]) != "workspace" || !strings.HasPrefix(filepath.Base(filepath.Dir(f[4])), "checkfu-jail-") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(f[4], name)); err == nil && string(b) == content {
			out = append(out, filepath.Dir(f[4]))
		}
	}
	if len(out) != 1 {
		t.Fatalf("control: %d mounted workspaces hold the instance's file, want 1: %v", len(out), out)
	}
	return out[0]
}

// TestCreateUnmountsWhenTheGuardFails: an allowlist instance whose
// guard does not start leaves neither its bounded workspace mounted nor
// its directory: the sweep only takes a dead Runner's, so a live
// Runner's failed Create would hold the tmpfs until it exits.
func TestCreateUnmountsWhenTheGuardFails(t *testing.T) {
	errGuard := errors.New("the guard does not start")
	p := newProvider(t, jail.Config{Guard: func(context.Context, []egress.HostPort) (string, func() error, error) {
		return "", nil, errGuard
	}})
	if !p.Support().Cgroups {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the jail with writable cgroups")
		}
		t.Skip("no writable cgroup v1 hierarchy: the workspace is a plain directory")
	}
	before := ownInstanceDirs(t)
	s := p.Spec("guard-fails", testDigest)
	s.NetworkMode = "allowlist"
	s.AllowedHosts = []egress.HostPort{{Host: "allowed.test", Port: 443}}
	_, err := jail.CreateForTest(t, p, s, "")
	if err == nil {
		t.Fatal("Create with a guard that fails: no error")
	}
	if !errors.Is(err, errGuard) {
		t.Fatalf("Create: %v, want the guard's error", err)
	}
	after := ownInstanceDirs(t)
	if after.mounts != before.mounts || after.dirs != before.dirs {
		t.Errorf("after a failed Create: %d workspace mounts and %d directories of this process, want %d and %d",
			after.mounts, after.dirs, before.mounts, before.dirs)
		// The test stops what it started.
		for _, m := range after.points[min(len(before.points), len(after.points)):] {
			unix.Unmount(m, unix.MNT_DETACH)
			os.RemoveAll(filepath.Dir(m))
		}
	}
}

// instanceCount is how many bounded workspaces this process has mounted
// and how many instance directories it has in the temporary directory.
type instanceCount struct {
	mounts, dirs int
	points       []string // the mount points, in the mount table's order
}

// ownInstanceDirs counts this test process's instance mounts and
// directories (checkfu-jail-OWNER-*): other test binaries have their own.
func ownInstanceDirs(t *testing.T) instanceCount {
	t.Helper()
	prefix := "checkfu-jail-" + deadowner.Self() + "-"
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var c instanceCount
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && filepath.Base(f[4]) == "workspace" && strings.HasPrefix(filepath.Base(filepath.Dir(f[4])), prefix) {
			c.mounts++
			c.points = append(c.points, f[4])
		}
	}
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	c.dirs = len(dirs)
	return c
}

// TestDestroyReleasesWhenItsContextEnds: Destroy releases everything the
// instance holds (adapters.Instance), even when its context ends before
// the killed jail is reaped: the bounded workspace is unmounted and the
// directory removed, since a second Destroy does nothing.
func TestDestroyReleasesWhenItsContextEnds(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if !p.Support().Cgroups {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the jail with writable cgroups")
		}
		t.Skip("no writable cgroup v1 hierarchy: the workspace is a plain directory")
	}
	before := ownInstanceDirs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("destroy-ended", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	if during := ownInstanceDirs(t); during.mounts != before.mounts+1 {
		t.Fatalf("control: %d workspace mounts with the instance, want %d", during.mounts, before.mounts+1)
	}
	ended, end := context.WithCancel(context.Background())
	end()
	inst.Destroy(ended) // its error is the context's, or nil if the jail was reaped first
	if err := inst.Destroy(context.Background()); err != nil {
		t.Errorf("the second Destroy: %v", err)
	}
	proc.Wait()
	// Destroy closed the process's pipes; left open, its stdout would
	// read the end the reaping gave it instead.
	if _, err := proc.Stdout().Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the process's stdout after Destroy with an ended context: %v, want it closed", err)
	}
	if after := ownInstanceDirs(t); after.mounts != before.mounts || after.dirs != before.dirs {
		t.Errorf("after Destroy with an ended context: %d workspace mounts and %d directories of this process, want %d and %d",
			after.mounts, after.dirs, before.mounts, before.dirs)
		// The test stops what it started.
		for _, m := range after.points[min(len(before.points), len(after.points)):] {
			unix.Unmount(m, unix.MNT_DETACH)
			os.RemoveAll(filepath.Dir(m))
		}
	}
}

// TestCreateForTestReleases: a test that ends between Create and its
// own Destroy (here by SkipNow; t.Fatal ends it the same way) leaves no
// workspace mounted and no instance directory: CreateForTest's cleanup
// destroys the instance when the test ends.
func TestCreateForTestReleases(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if !p.Support().Cgroups {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the jail with writable cgroups")
		}
		t.Skip("no writable cgroup v1 hierarchy: the workspace is a plain directory")
	}
	before := ownInstanceDirs(t)
	var during instanceCount
	t.Run("ends", func(t *testing.T) {
		if _, err := jail.CreateForTest(t, p, p.Spec("released", testDigest), ""); err != nil {
			t.Fatal(err)
		}
		during = ownInstanceDirs(t)
		t.SkipNow()
	})
	if during.mounts != before.mounts+1 {
		t.Fatalf("control: %d workspace mounts with the instance, want %d", during.mounts, before.mounts+1)
	}
	if after := ownInstanceDirs(t); after.mounts != before.mounts || after.dirs != before.dirs {
		t.Errorf("after a test that ended between Create and Destroy: %d workspace mounts and %d directories of this process, want %d and %d",
			after.mounts, after.dirs, before.mounts, before.dirs)
		for _, m := range after.points[min(len(before.points), len(after.points)):] { // the test stops what it started
			unix.Unmount(m, unix.MNT_DETACH)
			os.RemoveAll(filepath.Dir(m))
		}
	}
}
