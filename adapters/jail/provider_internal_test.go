//go:build linux

package jail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
)

// TestIsolationMismatchRefused claims an axis the jail never realizes
// (the image): every jail's read-back then differs from the statement,
// and the process is refused before the workload runs.
func TestIsolationMismatchRefused(t *testing.T) {
	p, err := New(testConfig(Config{}))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p.desc.Capability.Enforcement[admission.AxisImage] = admission.RunnerEnforced
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := CreateForTest(t, p, p.Spec("mismatch", "sha256:00"), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo ran > " + WorkspacePath + "/ran"}})
	if !errors.Is(err, CodeReadBackMismatch) {
		if proc != nil {
			proc.Wait()
		}
		t.Fatalf("OpenProcess with a claim the read-back cannot show = %v, want %s", err, CodeReadBackMismatch)
	}
	if _, err := os.Stat(filepath.Join(inst.(*instance).ws, "ran")); err == nil {
		t.Error("the workload ran although the read-back was refused")
	}
	// The reservation was released: with the true statement, it runs.
	p.desc.Capability.Enforcement[admission.AxisImage] = admission.Unenforced
	proc, err = inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	proc.Stdin().Close()
	if code, _ := proc.Wait(); code != 3 {
		t.Errorf("exit status %d, want 3", code)
	}
}

func TestSupportLacks(t *testing.T) {
	full := Support{Namespaces: true, Landlock: 7, Seccomp: true}
	if l := full.Lacks(); len(l) != 0 {
		t.Errorf("full support lacks %v", l)
	}
	for _, c := range []struct {
		s    Support
		want string
	}{
		{Support{Landlock: 7, Seccomp: true, NamespacesErr: "x"}, "user namespaces (x)"},
		{Support{Namespaces: true, Seccomp: true}, "landlock"},
		{Support{Namespaces: true, Landlock: 1}, "seccomp"},
	} {
		if l := c.s.Lacks(); len(l) != 1 || l[0] != c.want {
			t.Errorf("%+v lacks %v, want [%s]", c.s, l, c.want)
		}
	}
	if e := (Support{}).enforcement(); e[admission.AxisResources] != admission.Unenforced || e[admission.AxisImage] != admission.Unenforced {
		t.Errorf("without cgroups: %v", e)
	}
	if e := (Support{Cgroups: true}).enforcement(); e[admission.AxisResources] != admission.RunnerEnforced {
		t.Errorf("with cgroups: %v", e)
	}
}
