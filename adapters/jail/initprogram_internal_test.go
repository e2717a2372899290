//go:build linux

package jail

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenUnpolledStaysOutOfThePoller: the init program is opened
// without waiting on a FIFO's writer, and as a file Go's runtime does not
// poll (SetReadDeadline has nothing to act on), so no epoll_ctl of the
// runtime ever reaches a FUSE daemon. A FIFO shows it: opened
// O_NONBLOCK through os.OpenFile it would be polled.
func TestOpenUnpolledStaysOutOfThePoller(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := openUnpolled(fifo) // no writer: it must not wait for one
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Errorf("SetReadDeadline on the opened file = %v, want os.ErrNoDeadline: the runtime polls it", err)
	}
	if _, err := openUnpolled(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("openUnpolled of a missing path = %v, want os.ErrNotExist", err)
	}
}
