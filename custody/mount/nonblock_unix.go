//go:build unix

package mount

import (
	"errors"
	"syscall"
)

// openNonblock is added to the flags of every open, so that opening a
// FIFO returns at once (or fails, for a write without a reader) instead of
// waiting for a peer before the regular-file check can refuse it. It does
// not change reads or writes of regular files.
const openNonblock = syscall.O_NONBLOCK

// openedNonRegular reports whether err is a non-blocking open's failure on
// a file that is not regular: a FIFO without a reader, a socket, or a
// device that is not there (ENXIO).
func openedNonRegular(err error) bool { return errors.Is(err, syscall.ENXIO) }
