//go:build !linux

package process

import "os/exec"

// ownTree does nothing here: no PID namespaces. Kill reaches the
// process group only.
func ownTree(*exec.Cmd) bool { return false }

func treeRefused(error) bool { return false }
