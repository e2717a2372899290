//go:build !linux

package vercel_test

import "os/exec"

// isolate cannot make a network namespace outside Linux; tests that
// rely on it skip (isolationReal).
func isolate(cmd *exec.Cmd, none bool) {}

const isolationReal = false

func netnsMain() {}
