package jail

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
	"github.com/checkfu/checkfu/admission"
)

// namespaces are the namespaces a jail must not share with the Runner.
var namespaces = []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}

// A readback is what the kernel reports about a jail whose init stage
// has applied its locks and waits to exec: read from /proc by the
// Runner, not reported by the jail (Landlock alone, which /proc does not
// show, is the init stage's report).
type readback struct {
	newNS     map[string]bool // namespace -> differs from the Runner's
	capsZero  bool            // every capability set of the exec'ing thread is empty
	nnp       bool            // no_new_privs
	seccomp   bool            // a seccomp filter
	mappedOut bool            // the jail's root maps to the jail identity, not host root
	mountsOK  bool            // exactly the planned mount points, each with its flags
	landlock  int
	cgroup    bool // the cgroups hold the process
	limits    adapters.Limits
	problems  []string
}

func (r readback) String() string { return strings.Join(r.problems, "; ") }

func (r *readback) fail(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// A readbackPlan is what the read-back compares the jail with and can
// know before the init stage answers: the Runner's own namespaces, the
// mount plan, and the limits the groups hold (files of the Runner's,
// which nothing in the jail can write: it has no capability outside its
// user namespace and no cgroup file system). [planReadBack] reads it
// while the init stage builds the jail, so that only what the kernel
// says about the jail itself is read once the stage is ready.
type readbackPlan struct {
	mine    map[string]string // namespace -> the Runner's own link
	mineErr map[string]error
	mounts  map[string]plannedMount
	cg      *cgroup
	limits  adapters.Limits // read from cg's groups, when cg is set
}

func planReadBack(cfg initstage.Config, cg *cgroup) readbackPlan {
	p := readbackPlan{mine: map[string]string{}, mineErr: map[string]error{}, mounts: plannedMounts(cfg), cg: cg}
	for _, ns := range namespaces {
		p.mine[ns], p.mineErr[ns] = os.Readlink("/proc/self/ns/" + ns)
	}
	if cg != nil {
		p.limits = cg.limits()
	}
	return p
}

// readBack reads back the jail of init stage pid, whose ready report is
// rep, against plan.
func readBack(pid int, rep initstage.Ready, plan readbackPlan) readback {
	r := readback{newNS: map[string]bool{}, landlock: rep.Landlock}
	proc := "/proc/" + strconv.Itoa(pid)
	for _, ns := range namespaces {
		mine, err1 := plan.mine[ns], plan.mineErr[ns]
		theirs, err2 := os.Readlink(proc + "/ns/" + ns)
		r.newNS[ns] = err1 == nil && err2 == nil && mine != theirs
		if !r.newNS[ns] {
			r.fail("namespace %s is shared", ns)
		}
	}
	task, st := thread(proc, rep.Tid)
	r.capsZero = true
	for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v, ok := st[c]; !ok || strings.Trim(v, "0") != "" {
			r.capsZero = false
			r.fail("%s is %s", c, checkfu.Quote(v))
		}
	}
	if r.nnp = st["NoNewPrivs"] == "1"; !r.nnp {
		r.fail("no_new_privs is not set")
	}
	if r.seccomp = st["Seccomp"] == "2"; !r.seccomp {
		r.fail("no seccomp filter")
	}
	uid, _ := jailUID()
	if m, err := os.ReadFile(proc + "/uid_map"); err == nil {
		f := strings.Fields(string(m))
		r.mappedOut = len(f) == 3 && f[0] == "0" && f[1] == strconv.Itoa(uid) && f[2] == "1" && (uid != 0 || os.Geteuid() != 0)
	}
	if !r.mappedOut {
		r.fail("the jail's root is not mapped to uid %d alone", uid)
	}
	r.mountsOK = r.checkMounts(proc+"/mountinfo", plan.mounts)
	if r.landlock < 1 {
		r.fail("no landlock ruleset")
	}
	if cg := plan.cg; cg != nil {
		if r.cgroup = task != "" && cg.holds(task); !r.cgroup {
			r.fail("the cgroups do not hold the jail")
		}
		r.limits = plan.limits
	}
	return r
}

// thread finds the thread of process proc whose id in the jail's PID
// namespace is tid (the init stage knows only that one): the last field
// of its NSpid line. It returns the thread's /proc directory and its
// status, or "" and an empty status.
func thread(proc string, tid int) (string, map[string]string) {
	tasks, _ := os.ReadDir(proc + "/task")
	for _, t := range tasks {
		dir := proc + "/task/" + t.Name()
		st := readStatus(dir + "/status")
		if f := strings.Fields(st["NSpid"]); len(f) > 0 && f[len(f)-1] == strconv.Itoa(tid) {
			return dir, st
		}
	}
	return "", map[string]string{}
}

func readStatus(path string) map[string]string {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// A plannedMount is a mount point of the plan and whether it must be
// read-only; every planned mount but the device nodes must be nosuid.
type plannedMount struct {
	ro, device bool
}

// plannedMounts is the jail's mount plan, as its mountinfo shows it.
func plannedMounts(cfg initstage.Config) map[string]plannedMount {
	m := map[string]plannedMount{"/": {ro: true}, "/tmp": {}, "/proc": {}, "/dev": {}, "/dev/shm": {}}
	for _, d := range cfg.SystemDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			m[d] = plannedMount{ro: true}
		}
	}
	for _, b := range cfg.Binds {
		m[b.Target] = plannedMount{ro: !b.Writable}
	}
	for _, d := range initstage.Devices {
		m["/dev/"+d] = plannedMount{device: true}
	}
	return m
}

// checkMounts compares the jail's mountinfo with the plan: the same
// mount points, the read-only ones read-only, all but devices nosuid.
func (r *readback) checkMounts(path string, plan map[string]plannedMount) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		r.fail("mountinfo: %v", err)
		return false
	}
	ok := true
	var seen []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		point, opts := unescapeMount(f[4]), strings.Split(f[5], ",")
		want, planned := plan[point]
		if !planned {
			r.fail("unplanned mount %s", checkfu.Quote(point))
			ok = false
			continue
		}
		seen = append(seen, point)
		if want.ro && !slices.Contains(opts, "ro") {
			r.fail("mount %s is writable", checkfu.Quote(point))
			ok = false
		}
		if !want.device && !slices.Contains(opts, "nosuid") {
			r.fail("mount %s allows setuid", checkfu.Quote(point))
			ok = false
		}
	}
	for p := range plan {
		if !slices.Contains(seen, p) {
			r.fail("planned mount %s is missing", checkfu.Quote(p))
			ok = false
		}
	}
	return ok
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// evidence derives a process's evidence from the read-back: an axis is
// runner enforced only when what the kernel reports shows the mechanism.
func (i *instance) evidence(r readback) adapters.Evidence {
	d := i.p.desc
	var e admission.Enforcement
	set := func(a admission.Axis, ok bool) {
		if ok {
			e[a] = admission.RunnerEnforced
		}
	}
	ns := r.newNS
	set(admission.AxisFilesystem, r.mountsOK && r.landlock >= 1)
	set(admission.AxisMounts, r.mountsOK)
	set(admission.AxisNetworkPolicy, ns["net"])
	set(admission.AxisProcessIsolation, ns["user"] && ns["mnt"] && ns["pid"] && ns["ipc"] && ns["uts"] && ns["cgroup"])
	set(admission.AxisPrivileges, r.capsZero && r.nnp && r.mappedOut)
	set(admission.AxisSyscalls, r.seccomp)
	set(admission.AxisResources, r.cgroup && r.limits == i.spec.Limits)
	// Kill is SIGKILL to PID 1 of the jail's own PID namespace: the
	// kernel kills every process in it.
	set(admission.AxisLifetime, ns["pid"])
	return adapters.Evidence{
		Label: checkfu.LabelIsolated, Instance: i.spec.ID,
		Provider: d.Identity.Provider, ProviderRevision: d.Identity.Revision,
		MaterializationRevision: d.MaterializationRevision,
		Platform:                Platform, ProfileDigest: i.spec.ProfileDigest, NetworkMode: i.spec.NetworkMode,
		Limits: r.limits, Enforcement: e,
	}
}
