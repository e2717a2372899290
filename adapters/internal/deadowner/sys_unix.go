//go:build unix

package deadowner

import (
	"os"
	"syscall"
)

// namespace returns the identity of the PID namespace link names (its
// inode), and whether it could be read. Only Linux has the link: on
// another system no namespace can be read, and no owner is dead.
func namespace(link string) (uint64, bool) {
	fi, err := os.Stat(link)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Ino == 0 {
		return 0, false
	}
	return uint64(st.Ino), true
}

// gone reports whether no process has pid in this process's PID
// namespace.
func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }
