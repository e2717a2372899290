package jail

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu"
)

// noexec reports whether f's mount forbids exec (or cannot be asked).
func noexec(f *os.File) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(int(f.Fd()), &st) != nil || st.Flags&unix.ST_NOEXEC != 0
}

// onFUSE reports whether f is on a FUSE file system (or it cannot be
// asked): its daemon, which any user allowed to mount one runs, answers
// the owner and mode the checks read, and every read of the bytes, so
// it could pass the checks and later serve another program to a jail's
// exec through the very descriptor New opened.
func onFUSE(f *os.File) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(int(f.Fd()), &st) != nil || st.Type == unix.FUSE_SUPER_MAGIC
}

// openUnpolled opens path read-only without waiting on a FIFO's writer
// (O_NONBLOCK) and returns it as a blocking *os.File, which Go's runtime
// does not add to its poller. os.OpenFile would add it: on FUSE that
// epoll_ctl is a request to the file system's daemon, made by the
// runtime while it holds its processor (not as a system call), so a
// daemon that is slow or never answers stops a garbage collection of the
// whole Runner, and a daemon in the same process, as a test's is,
// deadlocks it.
func openUnpolled(path string) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openInitProgram opens path, [Config.InitProgram], for the provider to
// exec through the descriptor, and refuses it with
// checkfu.CodeConfigInvalid unless it is an absolute path to a regular
// file owned by root or the Runner's user, writable by that owner alone
// and executable, on a mount that allows exec and not on FUSE. The
// checks are on the opened file, not the path: the file checked is the
// one every jail execs.
func openInitProgram(path string) (*os.File, error) {
	refuse := func(why string) error {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: init program %s: %s", checkfu.Quote(path), why)
	}
	if !filepath.IsAbs(path) {
		return nil, refuse("the path must be absolute")
	}
	f, err := openUnpolled(path)
	if err != nil {
		return nil, refuse(err.Error())
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, refuse(err.Error())
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		err = refuse("not a regular file")
	case st == nil || st.Uid != 0 && int(st.Uid) != os.Geteuid():
		err = refuse("owned by neither root nor the Runner's user")
	case fi.Mode().Perm()&0o022 != 0 || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0:
		err = refuse("writable by others than its owner, or set-id")
	case fi.Mode().Perm()&0o001 == 0:
		err = refuse("the jail's identity cannot execute it (mode o+x is needed)")
	case noexec(f):
		err = refuse("its file system is mounted noexec")
	case onFUSE(f):
		err = refuse("its file system is FUSE, whose daemon answers the owner and the bytes")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
