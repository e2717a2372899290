//go:build unix

package process

import (
	"io"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"golang.org/x/sys/unix"
)

// maxSweepDepth bounds how deep [sweepDirs] descends into a dead
// owner's directory, counted from the directory itself (1): each level
// holds one descriptor open. A tree deeper than this is a workload's
// doing; the sweep leaves its deepest part, and so the directory, where
// it is.
const maxSweepDepth = 64

// sweepBatch is how many entries the sweep reads from a directory at a
// time, so that a directory of millions of entries costs bounded
// memory.
const sweepBatch = 256

// sweepRaceForTest, when a test sets it, runs between the checks of a
// swept directory and the removal of its contents, with its path: the
// test swaps the name there, as a racer would.
var sweepRaceForTest func(dir string)

// sweepDirs removes the instance directories of dead owners: a Runner
// (or test) killed outright never destroys its instances, and each
// left a directory. Only TMPDIR/checkfu-process-OWNER-* is touched,
// where the owner is dead ([deadowner.Orphans]: its PID namespace is this
// process's and no process has its pid there; a reused pid keeps its
// directories, and an owner in another namespace, one sharing the
// temporary directory from another container, keeps its own), and only
// a directory (never a link) this user owns that no one else may write
// in: the temporary directory is everyone's, so a name that matches
// proves nothing of who made it.
//
// The contents go through descriptors: each directory is opened
// without following a link, a link inside is removed as a link (its
// target is never opened), another filesystem mounted inside is never
// entered, and a directory renamed or swapped for a link after its
// checks makes the sweep remove nothing outside the tree it checked.
// The top directory itself goes by name, but only when empty.
func sweepDirs() {
	tmp := filepath.Clean(os.TempDir())
	for tfd, name := range deadowner.Orphans(tmp, dirPrefix) {
		sweepDir(tfd, filepath.Join(tmp, name))
	}
}

// sweepDir empties and removes dir, a name in the directory tfd: see
// [sweepDirs].
func sweepDir(tfd int, dir string) {
	name := filepath.Base(dir)
	fd, err := unix.Openat(tfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(fd), dir) // closes fd
	defer d.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return
	}
	if sweepRaceForTest != nil {
		sweepRaceForTest(dir)
	}
	if !emptyDir(d, uint64(st.Dev), 1) {
		return
	}
	// By name, but only an empty directory goes: a link or anything
	// put at the name since is kept.
	unix.Unlinkat(tfd, name, unix.AT_REMOVEDIR)
}

// emptyDir removes everything in the open directory d, on the device
// dev, depth levels below the swept directory's parent, and reports
// whether it is empty. It never follows a link: an entry that is not a
// directory is unlinked as it is, and a directory is opened with
// O_NOFOLLOW before it is emptied and removed.
func emptyDir(d *os.File, dev uint64, depth int) bool {
	fd := int(d.Fd())
	// A workload may have taken the write bit off its own directory.
	unix.Fchmod(fd, 0o700)
	for {
		entries, err := d.ReadDir(sweepBatch)
		for _, e := range entries {
			if !e.IsDir() {
				unix.Unlinkat(fd, e.Name(), 0)
				continue
			}
			if depth >= maxSweepDepth {
				continue
			}
			sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			var st unix.Stat_t
			if unix.Fstat(sub, &st) != nil || uint64(st.Dev) != dev || int(st.Uid) != os.Geteuid() {
				unix.Close(sub)
				continue
			}
			sd := os.NewFile(uintptr(sub), e.Name())
			empty := emptyDir(sd, dev, depth+1)
			sd.Close()
			if empty {
				unix.Unlinkat(fd, e.Name(), unix.AT_REMOVEDIR)
			}
		}
		if err == io.EOF || len(entries) == 0 {
			break
		}
		if err != nil {
			return false
		}
	}
	// Entries were removed while they were read: look again.
	if _, err := d.Seek(0, io.SeekStart); err != nil {
		return false
	}
	left, _ := d.ReadDir(1)
	return len(left) == 0
}
