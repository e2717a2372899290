//go:build unix

package deadowner

import (
	"iter"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Orphans yields the names in dir that dead owners left under prefix
// (those [Orphan] reports true for), each with a descriptor of dir. The
// descriptor is open, read-only, from before the first name until the
// loop ends, and is closed then: a sweep opens what it removes through
// it (openat, without following a link), never by a path through dir.
// A name is a base name, never a path; it is yielded only once its
// owner is found dead, and it proves nothing of what now stands there,
// which the sweep must check itself.
//
// The names are those matching prefix+"*-*" in dir (prefix holds no
// pattern character), in sorted order; dir is opened only when there
// is one, and nothing is yielded when it cannot be read or opened.
// Each range reads dir again.
func Orphans(dir, prefix string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		paths, err := filepath.Glob(filepath.Join(dir, prefix+"*-*"))
		if err != nil || len(paths) == 0 {
			return
		}
		dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		defer unix.Close(dfd)
		for _, p := range paths {
			name := filepath.Base(p)
			if Orphan(name, prefix) && !yield(dfd, name) {
				return
			}
		}
	}
}
