//go:build linux

package initstage

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRecvCgroups sends recvCgroups MsgCgroups messages around its
// bound: exactly the descriptors the config announced, up to
// MaxCgroups, are taken; more than MaxCgroups, another count, or
// another message are refused, and nothing received stays open.
func TestRecvCgroups(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	send := func(kind byte, nfds int) int {
		t.Helper()
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(sp[0]); unix.Close(sp[1]) })
		fds := make([]int, nfds)
		for k := range fds {
			fds[k] = int(f.Fd())
		}
		var oob []byte
		if nfds > 0 {
			oob = unix.UnixRights(fds...)
		}
		if err := unix.Sendmsg(sp[0], []byte{kind}, oob, nil, 0); err != nil {
			t.Fatal(err)
		}
		return sp[1]
	}
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	for _, c := range []struct {
		name       string
		kind       byte
		sent, want int
		ok         bool
	}{
		{"none asked", MsgCgroups, 0, 0, true},
		{"one", MsgCgroups, 1, 1, true},
		{"at the bound", MsgCgroups, MaxCgroups, MaxCgroups, true},
		{"over the bound", MsgCgroups, MaxCgroups + 1, MaxCgroups + 1, false},
		{"more than announced", MsgCgroups, MaxCgroups + 1, MaxCgroups, false},
		{"fewer than announced", MsgCgroups, 2, 3, false},
		{"another message", MsgGo, 3, 3, false},
		{"a negative count", MsgCgroups, 1, -1, false},
	} {
		sock := send(c.kind, c.sent)
		before := open()
		fds, err := recvCgroups(sock, c.want)
		if (err == nil) != c.ok {
			t.Errorf("%s: recvCgroups = %v, want ok %t", c.name, err, c.ok)
		}
		if err == nil && len(fds) != c.want {
			t.Errorf("%s: %d descriptors, want %d", c.name, len(fds), c.want)
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
		if after := open(); after != before {
			t.Errorf("%s: %d descriptors open after, %d before", c.name, after, before)
		}
	}
}

// TestJoinCgroupsRefusesOtherFiles: a descriptor in the cgroups message
// that is not a file of a cgroup file system (a regular file, a pipe,
// /dev/null) is refused, and nothing is written to any descriptor sent
// with it.
func TestJoinCgroupsRefusesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	for _, c := range []struct {
		name string
		open func() int
	}{
		{"a regular file named tasks", func() int {
			fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}},
		{"a pipe", func() int {
			fd, err := unix.Dup(p[1])
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}},
		{"/dev/null", func() int {
			fd, err := unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}},
	} {
		if err := joinCgroups([]int{c.open()}); err == nil {
			t.Errorf("%s: joinCgroups accepted it", c.name)
		}
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Errorf("the regular file holds %q (%v), want nothing written", b, err)
	}
	var buf [8]byte
	if n, _ := unix.Read(p[0], buf[:]); n > 0 {
		t.Errorf("the pipe received %q, want nothing written", buf[:n])
	}
}
