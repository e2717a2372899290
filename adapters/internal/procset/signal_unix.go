//go:build unix

package procset

import (
	"os"
	"syscall"
)

func signaled(s *os.ProcessState) (int, bool) {
	ws, ok := s.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}
