package wire

import (
	"os"
	"syscall"
)

// fSetPipeSz is Linux's F_SETPIPE_SZ fcntl command.
const fSetPipeSz = 1031

// growPipe asks the kernel for a 1 MiB pipe buffer (best effort: an
// unprivileged process may be capped by /proc/sys/fs/pipe-max-size). A
// larger pipe means fewer wakeups per megabyte between process and
// provider.
//
// It reaches the descriptor through SyscallConn, never f.Fd: Fd puts the
// descriptor in blocking mode, and then Close no longer interrupts a Read
// in progress, so a descendant holding the pipe open could keep a reader
// (and Server.Close, and a kill) waiting forever.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}
