package e2b_test

import "syscall"

// isolate puts a fake's process in a fresh network namespace (only a
// loopback interface, down) when the sandbox's network policy is none,
// so that "no network" is a real process's behaviour, not the fake's
// word. The tests run as root here; an unprivileged run would fail to
// start the process, which the tests report.
func isolate(attr *syscall.SysProcAttr, none bool) {
	if none {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
}

// isolationReal says whether isolate makes a real network namespace.
const isolationReal = true
