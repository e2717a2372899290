package door

import "syscall"

// childAttr kills the agent when the door dies (a provider's Kill reaches
// the door, which is the process it started).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
