//go:build unix

package egress

import "syscall"

// descriptorLimit returns the process's soft RLIMIT_NOFILE, or
// 1<<20 when it cannot be read.
func descriptorLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1 << 20
	}
	return uint64(lim.Cur)
}
