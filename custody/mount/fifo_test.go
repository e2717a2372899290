//go:build unix

package mount

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A FIFO inside a mount is not a regular file: reading or writing it is
// refused at once, instead of blocking the platform until some process
// opens the other end. A watchdog opens the other end if the call has
// not returned after a long while, so a regression fails the test instead
// of hanging it.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, dir := range []string{f.root, f.memory} {
		if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	watch := func(dir string) func() bool {
		var fired atomic.Bool
		w := time.AfterFunc(10*time.Second, func() {
			fired.Store(true)
			if p, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_RDWR, 0); err == nil {
				p.Close()
			}
		})
		return func() bool { w.Stop(); return fired.Load() }
	}

	stop := watch(f.root)
	_, err := f.read(t, "pipe")
	if stop() {
		t.Fatal("ReadFile of a FIFO blocked until the watchdog opened its other end")
	}
	wantCode(t, err, CodeNotRegular)

	stop = watch(f.memory)
	err = f.r.WriteFile(ctx, "s1", "memory", "pipe", []byte("x"))
	if stop() {
		t.Fatal("WriteFile of a FIFO blocked until the watchdog opened its other end")
	}
	wantCode(t, err, CodeNotRegular)
}
