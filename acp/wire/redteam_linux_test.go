package wire

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenAsUID returns a Unix listener at path whose SO_PEERCRED, as its
// clients read it, is uid: Linux records the credentials of the thread
// that calls listen(2), so this one thread takes uid as its effective uid
// (a raw setresuid changes only the calling thread) just for that call.
func listenAsUID(t *testing.T, path string, uid int) net.Listener {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
		runtime.UnlockOSThread()
		t.Fatal(e)
	}
	lerr := unix.Listen(fd, 8)
	_, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), 0, ^uintptr(0))
	if e != 0 {
		panic("restoring the thread's euid: " + e.Error()) // never unlock a thread left as another user
	}
	runtime.UnlockOSThread()
	if lerr != nil {
		t.Fatal(lerr)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// The Runner checks the provider's uid too: a hostile local provider of
// another user, listening where the Runner dials (a socket squatted or
// swapped in a shared directory), is refused before any stdin leaves.
func TestRunnerRefusesUnixProviderOfAnotherUID(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to listen as another user")
	}
	path := t.TempDir() + "/wire.sock"
	ln := listenAsUID(t, path, 65534)
	defer ln.Close()
	got := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := io.Copy(io.Discard, c)
		got <- int(n)
	}()
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	r := &Runner{
		Dial:            func(ctx context.Context) (net.Conn, error) { var d net.Dialer; return d.DialContext(ctx, "unix", path) },
		Stdin:           strings.NewReader("secret\n"),
		ReconnectWithin: time.Millisecond,
	}
	if _, err := r.Run(ctx); !errors.Is(err, CodePeerRefused) {
		t.Fatalf("Run() against a provider of uid 65534 = %v, want %s", err, CodePeerRefused)
	}
	if n := <-got; n != 0 {
		t.Fatalf("the hostile provider received %d bytes", n)
	}
}

// Whoever can write the socket's directory may swap the socket for a
// symlink between bind and the mode fix-up. Listen must not follow it:
// the symlink's target (here another socket) keeps its mode, and Listen
// fails.
func TestListenDoesNotChmodThroughASwappedSymlink(t *testing.T) {
	old := syscall.Umask(0o277) // bind then makes the socket 0400, so Listen must fix the mode
	defer syscall.Umask(old)
	dir := t.TempDir()
	victim := dir + "/victim.sock" // another socket of the user's, deliberately 0644
	vl, err := net.Listen("unix", victim)
	if err != nil {
		t.Fatal(err)
	}
	defer vl.Close()
	if err := os.Chmod(victim, 0o644); err != nil {
		t.Fatal(err)
	}
	path := dir + "/wire.sock"
	afterBind = func() {
		if err := errors.Join(os.Rename(path, dir+"/moved.sock"), os.Symlink(victim, path)); err != nil {
			t.Error(err)
		}
	}
	defer func() { afterBind = nil }()
	ln, err := Listen("unix", path)
	if err == nil {
		ln.Close()
		t.Error("Listen succeeded on a path swapped for a symlink")
	}
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("Listen changed the symlink target's mode to %v", fi.Mode().Perm())
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("Listen removed or replaced what is no longer its socket: %v, %v", fi, err)
	}
}

// A umask that takes the owner's bits away (0277) would leave the socket
// 0400, which its owner cannot connect to; Listen restores 0600.
func TestUnixSocketMode0600UnderANarrowingUmask(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	path := t.TempDir() + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v under umask 0277, want a socket with 0600", fi.Mode())
	}
}
