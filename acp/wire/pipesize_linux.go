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
func growPipe(f *os.File) {
	syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, 1<<20)
}
