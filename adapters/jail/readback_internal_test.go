//go:build linux

package jail

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
	"github.com/checkfu/checkfu/admission"
)

// TestReadBackOfAnUnjailedProcess reads back the test process itself,
// which is in no jail: the read-back must find every lock missing, and
// the evidence derived from it enforce nothing. It is what makes the
// read-back able to fail.
func TestReadBackOfAnUnjailedProcess(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cfg := initstage.Config{SystemDirs: DefaultSystemDirs(), Binds: []initstage.Bind{{Target: WorkspacePath, Dir: true, Writable: true}}}
	r := readBack(os.Getpid(), initstage.Ready{Tid: unix.Gettid()}, planReadBack(cfg, nil))
	for ns, differs := range r.newNS {
		if differs {
			t.Errorf("namespace %s of the test process reads as new", ns)
		}
	}
	if len(r.newNS) != len(namespaces) {
		t.Errorf("read %d namespaces, want %d", len(r.newNS), len(namespaces))
	}
	underSeccomp := readStatus("/proc/self/status")["Seccomp"] == "2"
	if os.Geteuid() == 0 && r.capsZero {
		t.Error("root's capabilities read as empty")
	}
	if r.mappedOut || r.mountsOK || r.landlock != 0 || r.cgroup || (r.seccomp && !underSeccomp) {
		t.Errorf("read-back of an unjailed process: %+v", r)
	}
	if len(r.problems) == 0 {
		t.Error("no problem reported")
	}
	i := &instance{p: &Provider{desc: describe(Support{Cgroups: true}, false)}, spec: adapters.InstanceSpec{ID: "x", Limits: adapters.Limits{Pids: 1}}}
	ev := i.evidence(r)
	for _, a := range admission.Axes() {
		if a == admission.AxisSyscalls && underSeccomp {
			continue
		}
		if a == admission.AxisPrivileges && os.Geteuid() != 0 {
			continue
		}
		if ev.Enforcement[a] != admission.Unenforced {
			t.Errorf("axis %s reads as enforced for an unjailed process", a)
		}
	}
	if !strings.Contains(r.String(), "namespace") {
		t.Errorf("problems %q do not name the namespaces", r.String())
	}
}

// TestMountPlanCheck feeds checkMounts mount tables that differ from the
// plan in one way each.
func TestMountPlanCheck(t *testing.T) {
	plan := map[string]plannedMount{"/": {ro: true}, "/workspace": {}, "/dev/null": {device: true}}
	line := func(point, opts string) string { return "1 0 0:1 / " + point + " " + opts + " - tmpfs x rw" }
	good := []string{line("/", "ro,nosuid"), line("/workspace", "rw,nosuid,nodev"), line("/dev/null", "rw")}
	for _, c := range []struct {
		name  string
		lines []string
		ok    bool
	}{
		{"the plan", good, true},
		{"a writable root", []string{line("/", "rw,nosuid"), good[1], good[2]}, false},
		{"setuid allowed", []string{good[0], line("/workspace", "rw,nodev"), good[2]}, false},
		{"an unplanned mount", append(append([]string{}, good...), line("/host", "ro,nosuid")), false},
		{"a planned mount missing", good[:2], false},
		{"an escaped mount point", []string{good[0], line(`/work\040space`, "rw,nosuid"), good[2]}, false},
	} {
		f := t.TempDir() + "/mountinfo"
		os.WriteFile(f, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644)
		var r readback
		if got := r.checkMounts(f, plan); got != c.ok {
			t.Errorf("%s: checkMounts = %t (%s), want %t", c.name, got, r.String(), c.ok)
		}
	}
}
