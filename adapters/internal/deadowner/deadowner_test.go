//go:build linux

package deadowner

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func ownNamespace(t *testing.T) uint64 {
	t.Helper()
	ns, ok := Namespace()
	if !ok {
		t.Fatal("control: this process cannot read its PID namespace")
	}
	return ns
}

// TestDead: only a dead pid of this process's own namespace is dead; a
// live pid, this process, another namespace and a name without one are
// not.
func TestDead(t *testing.T) {
	ns := ownNamespace(t)
	dead := deadPid(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Wait()
	defer live.Process.Kill()
	for _, c := range []struct {
		what, name string
		want       bool
	}{
		{"a dead pid of this namespace", Format(dead, ns), true},
		{"a dead pid named by Name", Name(dead), true},
		{"a live pid", Format(live.Process.Pid, ns), false},
		{"this process", Self(), false},
		{"a dead pid of another namespace", Format(dead, ns+1), false},
		{"a dead pid of namespace 0", Format(dead, 0), false},
		{"an old name, pid alone", strconv.Itoa(dead), false},
	} {
		if got := Dead(c.name); got != c.want {
			t.Errorf("%s: Dead(%q) = %t, want %t", c.what, c.name, got, c.want)
		}
	}
}

// TestDeadUnreadableNamespace: when this process cannot read its own
// namespace, no owner is dead, not even one named in the namespace it
// would have read.
func TestDeadUnreadableNamespace(t *testing.T) {
	ns := ownNamespace(t)
	pid := deadPid(t)
	if !dead1(Format(pid, ns), ns) {
		t.Fatal("control: the dead pid is not dead with the namespace read")
	}
	bad, ok := namespace("/proc/self/ns/no-such-namespace")
	if ok {
		t.Fatalf("namespace of a missing link = %d, true; want false", bad)
	}
	for _, name := range []string{Format(pid, ns), Format(pid, 0), Format(pid, bad)} {
		if dead(name, bad, ok, os.Getpid()) {
			t.Errorf("with the namespace unreadable, Dead(%q) = true", name)
		}
	}
}

// dead1 is dead for this process in the namespace ns.
func dead1(name string, ns uint64) bool { return dead(name, ns, true, os.Getpid()) }

// TestNamespaceIsTheInode: the identity is the inode the kernel shows
// in the link's text, "pid:[N]".
func TestNamespaceIsTheInode(t *testing.T) {
	ns := ownNamespace(t)
	text, err := os.Readlink(nsLink)
	if err != nil {
		t.Fatal(err)
	}
	if want := "pid:[" + strconv.FormatUint(ns, 10) + "]"; text != want {
		t.Errorf("%s = %q, want %q", nsLink, text, want)
	}
}

// TestParse: names round-trip; anything not canonical is no name.
func TestParse(t *testing.T) {
	if pid, ns, ok := Parse(Format(123, 4026531836)); !ok || pid != 123 || ns != 4026531836 {
		t.Errorf("Parse(Format(123, 4026531836)) = %d, %d, %t", pid, ns, ok)
	}
	for _, s := range []string{"", "123", "123.", ".4", "0.4", "1.0", "01.4", "1.04", "+1.4", "-1.4", "1.+4",
		"1.4.5", "1 .4", "1.4x", "99999999999999999999.4", "1.99999999999999999999"} {
		if pid, ns, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %d, %d, true; want false", s, pid, ns)
		}
	}
}
