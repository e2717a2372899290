package wire

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu"
)

// checkPeerUID refuses a Unix-socket peer whose uid (SO_PEERCRED, taken
// by the kernel when the peer connected) is not this process's.
func checkPeerUID(c net.Conn) error {
	sc, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := sc.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return checkfu.Refuse(CodePeerRefused, "wire: reading the Unix-socket peer's credentials: %v", credErr)
	}
	if !peerUIDMatches(cred.Uid) {
		return checkfu.Refuse(CodePeerRefused, "wire: the Unix-socket peer runs as uid %d, not %d", cred.Uid, os.Getuid())
	}
	return nil
}

// listenUnix creates a listening Unix socket at path with mode 0600. The
// socket's inode mode is set with fchmod before bind, and Linux creates
// the file with that mode less the umask, so there is no moment at which
// the file exists with a wider mode; chmodSocket then undoes what the
// umask took away, without following a symlink.
func listenUnix(path string) (net.Listener, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "unix", Err: os.NewSyscallError("socket", err)}
	}
	f := os.NewFile(uintptr(fd), "unix:"+path)
	defer f.Close()
	fail := func(call string, err error) (net.Listener, error) {
		return nil, &net.OpError{Op: "listen", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: os.NewSyscallError(call, err)}
	}
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return fail("fchmod", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return fail("bind", err)
	}
	if afterBind != nil {
		afterBind()
	}
	if err := chmodSocket(path); err != nil {
		if !errors.Is(err, errSocketReplaced) {
			os.Remove(path)
		} // else path is no longer ours: leave it
		return fail("chmod", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		os.Remove(path)
		return fail("listen", err)
	}
	ln, err := net.FileListener(f)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return &unixListener{Listener: ln, path: path}, nil
}

// chmodSocket sets the mode of the socket file at path to 0600 (a umask
// with 0200 or 0400 set narrowed it at bind) without following a
// symlink: whoever can write the directory may have swapped path since
// bind, and os.Chmod would change the mode of the symlink's target. It
// opens path itself (O_PATH|O_NOFOLLOW), refuses anything but a socket,
// and changes the mode of what it opened, through /proc/self/fd.
func chmodSocket(path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errSocketReplaced
	}
	if st.Mode&0o7777 == 0o600 {
		return nil
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o600)
}

// errSocketReplaced reports that what is at the socket's path after bind
// is not a socket: someone swapped it.
var errSocketReplaced = errors.New("the socket path was replaced after bind")

// afterBind, when set (tests), runs between bind and the mode fix-up.
var afterBind func()

// unixListener removes its socket file on Close, as net.Listen's does.
type unixListener struct {
	net.Listener
	path string
	once sync.Once
}

func (l *unixListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { os.Remove(l.path) })
	return err
}
