//go:build linux

package deadowner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

const testPrefix = "checkfu-test-"

// TestOrphan: a name is an orphan only with the prefix, then a dead
// owner of this namespace, then "-"; anything else is kept.
func TestOrphan(t *testing.T) {
	ns := ownNamespace(t)
	pid := deadPid(t)
	dead := Format(pid, ns)
	for _, c := range []struct {
		what, name string
		want       bool
	}{
		{"a dead owner's", testPrefix + dead + "-x", true},
		{"a dead owner's, nothing after the dash", testPrefix + dead + "-", true},
		{"a dead owner's, no dash", testPrefix + dead, false},
		{"a dead owner's, without the prefix", dead + "-x", false},
		{"a dead owner's, under another prefix", "checkfu-other-" + dead + "-x", false},
		{"a dead owner's, the prefix not at the start", "x" + testPrefix + dead + "-x", false},
		{"this process's", testPrefix + Self() + "-x", false},
		{"another namespace's", testPrefix + Format(pid, ns+1) + "-x", false},
		{"an old name's (a pid alone)", testPrefix + strconv.Itoa(pid) + "-x", false},
		{"a name with more before the owner", testPrefix + "x" + dead + "-x", false},
		{"the prefix alone", testPrefix, false},
	} {
		if got := Orphan(c.name, testPrefix); got != c.want {
			t.Errorf("%s: Orphan(%q, %q) = %t, want %t", c.what, c.name, testPrefix, got, c.want)
		}
	}
}

// TestOrphans: the names yielded are the orphans of the directory, in
// order, each with an open descriptor of the directory, closed when the
// loop ends; a directory that cannot be read yields nothing.
func TestOrphans(t *testing.T) {
	ns := ownNamespace(t)
	pid := deadPid(t)
	dead := Format(pid, ns)
	dir := t.TempDir()
	want := []string{testPrefix + dead + "-a", testPrefix + dead + "-b"}
	for _, name := range append([]string{
		testPrefix + dead, testPrefix + Self() + "-c", testPrefix + Format(pid, ns+1) + "-d",
		testPrefix + strconv.Itoa(pid) + "-e", dead + "-f",
	}, want...) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var dst unix.Stat_t
	if err := unix.Stat(dir, &dst); err != nil {
		t.Fatal(err)
	}
	var got []string
	fds := map[int]bool{}
	for fd, name := range Orphans(dir, testPrefix) {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Ino != dst.Ino || st.Dev != dst.Dev {
			t.Errorf("the descriptor %d yielded with %q is not the directory's: %v", fd, name, err)
		}
		got = append(got, name)
		fds[fd] = true
	}
	if !slices.Equal(got, want) {
		t.Errorf("Orphans(%s, %q) yielded %q, want %q", dir, testPrefix, got, want)
	}
	if len(fds) != 1 {
		t.Errorf("Orphans yielded %d descriptors, want one", len(fds))
	}
	for fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			t.Errorf("the descriptor %d is still open after the loop: %v", fd, err)
		}
	}

	n := 0
	for range Orphans(dir, testPrefix) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("a loop that breaks ran %d times", n)
	}
	for _, d := range []string{filepath.Join(dir, "no-such-dir"), filepath.Join(dir, testPrefix+dead+"-a")} {
		for _, name := range Orphans(d, testPrefix) {
			t.Errorf("Orphans(%s) yielded %q", d, name)
		}
	}
}
