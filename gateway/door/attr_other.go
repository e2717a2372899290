//go:build !linux

package door

import "syscall"

// childAttr: no parent-death signal outside Linux; the provider's kill of
// the process group reaches the agent.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
