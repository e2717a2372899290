//go:build unix

package mount

import (
	"io/fs"
	"syscall"
)

// linkCount returns how many names (hard links) the file fi describes
// has, from its stat record, or 0 if fi carries none.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
