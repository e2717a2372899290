package door

import (
	"os"
	"syscall"
)

// childAttr puts the agent in a process group of its own, and kills it
// when the door dies (a provider's Kill reaches the door, which is the
// process it started).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends s to the agent's process group, whose id is the
// agent's pid. A group with no process left is not an error: the id
// cannot have been reused while the group existed.
func signalGroup(p *os.Process, s os.Signal) {
	if sig, ok := s.(syscall.Signal); ok {
		syscall.Kill(-p.Pid, sig)
	}
}
