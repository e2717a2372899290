package deadowner

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// nsLink is where a process reads its own PID namespace.
const nsLink = "/proc/self/ns/pid"

// own is this process's PID namespace, read once: a process never
// leaves its own PID namespace (unshare and setns change only its
// children's).
var own = sync.OnceValues(func() (uint64, bool) { return namespace(nsLink) })

// Namespace returns the identity of this process's PID namespace, and
// whether it could be read.
func Namespace() (uint64, bool) { return own() }

// Format returns the owner name of pid in the PID namespace ns.
func Format(pid int, ns uint64) string {
	return strconv.Itoa(pid) + "." + strconv.FormatUint(ns, 10)
}

// Name returns the owner name of pid in this process's PID namespace;
// the namespace is 0, which no sweep takes, when it cannot be read.
func Name(pid int) string {
	ns, _ := own()
	return Format(pid, ns)
}

// Self returns this process's owner name.
func Self() string { return Name(os.Getpid()) }

// Parse returns the pid and namespace of an owner name, and whether it
// is one: both decimal, canonical (no sign, no leading zero) and not 0.
func Parse(name string) (pid int, ns uint64, ok bool) {
	pidText, nsText, dotted := strings.Cut(name, ".")
	if !dotted || !canonical(pidText) || !canonical(nsText) {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return 0, 0, false
	}
	ns, err = strconv.ParseUint(nsText, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return pid, ns, true
}

// canonical reports whether s is a decimal number as strconv formats
// one, other than 0.
func canonical(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Dead reports whether the owner name names a process of this process's
// PID namespace that no longer exists: see the package doc. It is
// false for anything else: a live pid, another namespace, a namespace
// this process cannot read, a name that is not an owner name.
func Dead(name string) bool {
	ns, ok := own()
	return dead(name, ns, ok, os.Getpid())
}

// dead is [Dead] for a process of pid self in the namespace ns, ok when
// it was read.
func dead(name string, ns uint64, ok bool, self int) bool {
	pid, owner, parsed := Parse(name)
	if !ok || !parsed || owner != ns {
		return false
	}
	return pid != self && gone(pid)
}
