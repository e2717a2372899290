//go:build linux

package jail

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
)

// TestDestroyBoundsTheReaping: a jail that outlives its kill (here its
// kill is SIGTERM, which the workload as PID 1 of its namespace
// ignores: the stand-in for a jail stuck in the kernel) does not hold
// Destroy, even with a context that never ends: after ReapTimeout it
// returns an error that wraps context.DeadlineExceeded, with the
// workspace unmounted and the instance's directory removed.
func TestDestroyBoundsTheReaping(t *testing.T) {
	p, err := New(testConfig(Config{}))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	inst, err := CreateForTest(t, p, p.Spec("unreaped", "sha256:00"), "")
	if err != nil {
		t.Fatal(err)
	}
	i := inst.(*instance)
	i.kill = func(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
	ctx, cancel := context.WithTimeout(context.Background(), testCreateTimeout)
	defer cancel()
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo started; exec /bin/sleep 1000"}})
	if err != nil {
		t.Fatal(err)
	}
	// The test stops what it started: the jail is killed for real.
	kill := func() {
		i.kill = killJail
		proc.Kill()
	}
	defer func() {
		kill()
		proc.Wait()
	}()
	if line, err := bufio.NewReader(proc.Stdout()).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("the workload did not start: %q, %v", line, err)
	}

	destroyed := make(chan error, 1)
	go func() { destroyed <- inst.Destroy(context.Background()) }()
	select {
	case err = <-destroyed:
	case <-time.After(ReapTimeout + 20*time.Second): // against a hang, not a timing assertion
		t.Errorf("Destroy did not return within %v of ReapTimeout (%v): it waits for the reaping", 20*time.Second, ReapTimeout)
		kill()
		err = <-destroyed
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not reaped") {
		t.Errorf("Destroy of a jail that outlived its kill: %v, want it not reaped (context.DeadlineExceeded)", err)
	}
	if _, serr := os.Stat(i.dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the instance's directory %s after Destroy: %v, want it removed", i.dir, serr)
	}
	mounts, rerr := os.ReadFile("/proc/self/mountinfo")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if strings.Contains(string(mounts), " "+i.ws+" ") {
		t.Errorf("the workspace %s is still mounted after Destroy", i.ws)
	}
}
