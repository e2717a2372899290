package jail

import (
	"strconv"

	"github.com/checkfu/checkfu/admission"
)

// Support is what the kernel offers a jail, found by [Probe]: each field
// a mechanism, tried rather than read from a version number.
type Support struct {
	// Namespaces: a process started in new user, mount, PID, network,
	// IPC, UTS and cgroup namespaces ran and answered.
	Namespaces bool
	// NamespacesErr says why Namespaces is false, when it is.
	NamespacesErr string
	// Landlock is the Landlock ABI version, 0 for none.
	Landlock int
	// Seccomp: the kernel filters system calls, and the jail has a
	// filter for this architecture.
	Seccomp bool
	// Cgroups: the cgroup v1 memory (with swap accounting or no swap),
	// pids and cpu hierarchies are writable, so limits can be applied.
	Cgroups bool
}

// Lacks names, in a fixed order, each mechanism the jail cannot run
// without that the kernel does not offer: "user namespaces" (with the
// reason), "landlock", "seccomp". Empty means the jail can run.
// Cgroups are not among them: without them the resources axis is not
// advertised and limits are refused.
func (s Support) Lacks() []string {
	var l []string
	if !s.Namespaces {
		l = append(l, "user namespaces ("+s.NamespacesErr+")")
	}
	if s.Landlock < 1 {
		l = append(l, "landlock")
	}
	if !s.Seccomp {
		l = append(l, "seccomp")
	}
	return l
}

// String is a one-line summary, for logs and the quickstart.
func (s Support) String() string {
	return "namespaces " + strconv.FormatBool(s.Namespaces) + ", landlock ABI " + strconv.Itoa(s.Landlock) +
		", seccomp " + strconv.FormatBool(s.Seccomp) + ", cgroups v1 " + strconv.FormatBool(s.Cgroups)
}

// enforcement is the statement of a provider on a kernel with support
// s: runner_enforced on every axis the jail applies and reads back; the
// image axis never (the host's own system directories, not a pinned
// image), resources only with writable cgroups.
func (s Support) enforcement() admission.Enforcement {
	var e admission.Enforcement
	for _, a := range []admission.Axis{admission.AxisFilesystem, admission.AxisMounts, admission.AxisNetworkPolicy,
		admission.AxisProcessIsolation, admission.AxisPrivileges, admission.AxisSyscalls, admission.AxisLifetime} {
		e[a] = admission.RunnerEnforced
	}
	if s.Cgroups {
		e[admission.AxisResources] = admission.RunnerEnforced
	}
	return e
}
