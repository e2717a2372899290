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
