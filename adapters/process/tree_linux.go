package process

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
)

// noNamespaces is set once the kernel refused a PID namespace: later
// processes run in a process group only.
var noNamespaces atomic.Bool

// ownTree makes cmd the init of a PID namespace of its own (inside a user
// namespace mapping only the Runner's own uid and gid, unless the Runner
// is root): when it exits or is killed, the kernel kills every process it
// left behind, whatever group or session that process moved to. It
// reports whether it did; after the kernel refused once, it does not.
func ownTree(cmd *exec.Cmd) bool {
	if noNamespaces.Load() {
		return false
	}
	attr := cmd.SysProcAttr
	attr.Cloneflags = syscall.CLONE_NEWPID
	if uid := os.Getuid(); uid != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return true
}

// treeRefused reports whether err is the kernel refusing ownTree's
// namespaces (no privilege, or none left), and remembers it.
func treeRefused(err error) bool {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) {
		noNamespaces.Store(true)
		return true
	}
	return false
}
