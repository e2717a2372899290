//go:build !unix

package process

import (
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

func signaled(*os.ProcessState) (int, bool) { return 0, false }
