//go:build !linux

package daytona_test

import "syscall"

// isolate cannot make a network namespace outside Linux; tests that
// rely on it skip (isolationReal).
func isolate(attr *syscall.SysProcAttr, none bool) {}

const isolationReal = false
