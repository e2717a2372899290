//go:build !linux

package vendortest

import "os/exec"

// Isolate cannot make a network namespace outside Linux; tests that
// rely on it skip (IsolationReal).
func Isolate(cmd *exec.Cmd, none bool) {}

// IsolationReal says whether Isolate makes a real network namespace.
const IsolationReal = false

// NetnsMain, called first from TestMain, is the re-executed side.
func NetnsMain() {}
