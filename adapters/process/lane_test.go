package process_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/admission"
)

// TestTrustedLaneOnly: admission refuses the process provider for the
// adversarial lane (no enforcement axis is realized), and admits it for
// the trusted lane.
func TestTrustedLaneOnly(t *testing.T) {
	d := process.New().Describe()
	if err := adapters.Check(d); err != nil {
		t.Fatal(err)
	}
	p, err := admission.ParseProfile([]byte(`{"name": "offline",
		"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "network_policy": {"type": "none"}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := admission.Publish(nil, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := admission.Candidate{Target: d.Identity, Advertised: d.Capability.EgressCertification}
	if err := admission.CheckLane(admission.LaneAdversarial, v, c, d.Capability); !errors.Is(err, admission.CodeLaneRequirementUnmet) {
		t.Errorf("adversarial lane: CheckLane = %v, want %s", err, admission.CodeLaneRequirementUnmet)
	}
	if err := admission.CheckLane(admission.LaneTrusted, v, c, d.Capability); err != nil {
		t.Errorf("trusted lane: CheckLane = %v", err)
	}
	if g := adapters.Grade(d, nil); g != checkfu.Unsupported {
		t.Errorf("Grade = %v, want unsupported", g)
	}
	if ok, _ := d.Capability.Enforcement.Realized(); ok || d.Capability.Enforcement != (admission.Enforcement{}) {
		t.Errorf("the process provider claims enforcement: %v", d.Capability.Enforcement)
	}
	for _, m := range d.Capability.NetworkModes {
		if m != process.NetworkMode {
			t.Errorf("the process provider declares network mode %q; a plain process can open sockets", m)
		}
	}
}

func TestCreateRefusesWhatItCannotApply(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func(*adapters.InstanceSpec){
		"root image": func(s *adapters.InstanceSpec) { s.RootImage = "sha256:" + strings.Repeat("1", 64) },
		"platform":   func(s *adapters.InstanceSpec) { s.Platform = "plan9/mips" },
		"none":       func(s *adapters.InstanceSpec) { s.NetworkMode = "none" },
		"allowlist":  func(s *adapters.InstanceSpec) { s.NetworkMode = "allowlist" },
		"memory":     func(s *adapters.InstanceSpec) { s.Limits.MemoryBytes = 1 << 30 },
		"pids":       func(s *adapters.InstanceSpec) { s.Limits.Pids = 10 },
		"cpus":       func(s *adapters.InstanceSpec) { s.Limits.NanoCPUs = 1e9 },
	} {
		s := process.Spec("i", "")
		f(&s)
		if inst, err := process.New().Create(ctx, s); !errors.Is(err, adapters.CodeSpecUnsupported) {
			if inst != nil {
				inst.Destroy(ctx)
			}
			t.Errorf("%s: Create = %v, want %s", name, err, adapters.CodeSpecUnsupported)
		}
	}
	if _, err := process.New().Create(ctx, process.Spec("", "")); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("empty ID: Create = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// TestEnvironmentNotInherited: a secret in the Runner's environment is
// not in the process's.
func TestEnvironmentNotInherited(t *testing.T) {
	t.Setenv("CHECKFU_TEST_SECRET", "hunter2")
	ctx := context.Background()
	inst, err := process.New().Create(ctx, process.Spec("env", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx)
	p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "env"}, Env: []string{"GIVEN=1"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	out, _ := io.ReadAll(p.Stdout())
	p.Wait()
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "GIVEN=1") {
		t.Errorf("process environment:\n%s", out)
	}
}

func TestDestroyRemovesTheDirectory(t *testing.T) {
	ctx := context.Background()
	inst, err := process.New().Create(ctx, process.Spec("dir", ""))
	if err != nil {
		t.Fatal(err)
	}
	p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "pwd"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout())
	p.Wait()
	dir := strings.TrimSpace(string(out))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("instance directory %q: %v", dir, err)
	}
	inst.Destroy(ctx)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Destroy, %q: %v", dir, err)
	}
}

func TestStartFailure(t *testing.T) {
	ctx := context.Background()
	inst, err := process.New().Create(ctx, process.Spec("nostart", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx)
	if _, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/nonexistent/checkfu"}}); err == nil {
		t.Fatal("a missing command started")
	}
	if _, err := inst.OpenProcess(ctx, adapters.ProcessSpec{}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("empty argv: %v", err)
	}
	// the failed start released the reservation
	p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "exit 0"}})
	if err != nil {
		t.Fatalf("after a failed start: %v", err)
	}
	p.Wait()
}

// TestNoDescriptorLeak: processes whose output is read to EOF, on an
// instance that lives on, leave no descriptor open.
func TestNoDescriptorLeak(t *testing.T) {
	fds := func() int {
		e, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(e)
	}
	ctx := context.Background()
	inst, err := process.New().Create(ctx, process.Spec("fds", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx)
	run := func() {
		p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "printf x; printf y >&2"}})
		if err != nil {
			t.Fatal(err)
		}
		p.Stdin().Close()
		io.ReadAll(p.Stdout())
		io.ReadAll(p.Stderr())
		p.Wait()
	}
	run()
	before := fds()
	for range 30 {
		run()
	}
	if after := fds(); after > before+2 {
		t.Errorf("%d descriptors before 30 processes, %d after", before, after)
	}
}

// TestDestroyRemovesTheDirectoryWhenItsContextEnds: Destroy with a
// context that has already ended still removes the instance's
// directory (Destroy runs once), and says the context ended.
func TestDestroyRemovesTheDirectoryWhenItsContextEnds(t *testing.T) {
	inst, err := process.New().Create(context.Background(), process.Spec("dir-ended", ""))
	if err != nil {
		t.Fatal(err)
	}
	p, err := inst.OpenProcess(context.Background(), adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "pwd; exec sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(line)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := inst.Destroy(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Destroy with an ended context = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Destroy with an ended context, %q: %v", dir, err)
	}
}
