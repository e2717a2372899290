//go:build !linux

package door

import (
	"os"
	"syscall"
)

// childAttr: no parent-death signal outside Linux; the provider's kill of
// the process group reaches the agent.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// signalGroup signals the agent itself outside Linux.
func signalGroup(p *os.Process, s os.Signal) { p.Signal(s) }
