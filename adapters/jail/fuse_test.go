//go:build linux

package jail_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail"
)

// fuseFile is a FUSE file system the test serves itself over /dev/fuse:
// one file, name, holding data, which it claims is owned by root with
// mode 0755, whatever the truth. A FUSE daemon decides every answer: it
// can claim any owner and serve other bytes at each read.
type fuseFile struct {
	dir  string
	fd   int
	name string
	data []byte
	done sync.WaitGroup
	stop atomic.Bool
	// polled is set once the kernel asks the daemon FUSE_POLL: what
	// Go's runtime does when it adds a file on the mount to its poller.
	polled atomic.Bool
}

// The FUSE opcodes the responder answers; every other gets ENOSYS.
const (
	fuseLookup  = 1
	fuseForget  = 2
	fuseGetattr = 3
	fuseOpen    = 14
	fuseRead    = 15
	fuseStatfs  = 17
	fuseRelease = 18
	fuseFlush   = 25
	fuseInit    = 26
	fuseDestroy = 38
	fusePoll    = 40 // recorded, then answered ENOSYS
)

// mountFUSE mounts a fuseFile holding data as dir/name; it skips
// without root or FUSE (under CI=true it fails instead: the FUSE mutant
// needs this test to run), and is unmounted at the test's end.
func mountFUSE(t *testing.T, name string, data []byte) *fuseFile {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("mounting a FUSE file system needs root")
	}
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		skip("no FUSE: %v", err)
	}
	dir := t.TempDir()
	opts := "fd=" + strconv.Itoa(fd) + ",rootmode=40000,user_id=0,group_id=0,allow_other"
	if err := unix.Mount("checkfu-test-fuse", dir, "fuse", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		unix.Close(fd)
		skip("mount FUSE: %v", err)
	}
	f := &fuseFile{dir: dir, fd: fd, name: name, data: data}
	f.done.Add(1)
	go f.serve()
	t.Cleanup(func() {
		f.stop.Store(true) // serve polls for it
		unix.Unmount(dir, unix.MNT_DETACH)
		f.done.Wait()
		unix.Close(fd)
	})
	return f
}

func (f *fuseFile) serve() {
	defer f.done.Done()
	buf := make([]byte, 1<<20+4096)
	le := binary.LittleEndian
	for !f.stop.Load() {
		// A read of /dev/fuse is not woken by a close: poll, and look
		// at stop between polls.
		p := []unix.PollFd{{Fd: int32(f.fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(p, 50); n == 0 || errors.Is(err, unix.EINTR) {
			continue
		} else if err != nil {
			return
		}
		n, err := unix.Read(f.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil || n < 40 {
			return
		}
		in := buf[:n]
		op, unique, node := le.Uint32(in[4:]), le.Uint64(in[8:]), le.Uint64(in[16:])
		body := in[40:]
		var out []byte
		errno := int32(0)
		switch op {
		case fuseInit:
			out = make([]byte, 64)
			le.PutUint32(out[0:], 7)      // major
			le.PutUint32(out[4:], 31)     // minor
			le.PutUint32(out[8:], 0)      // max_readahead
			le.PutUint32(out[20:], 1<<20) // max_write
			le.PutUint32(out[24:], 1)     // time_gran
			le.PutUint16(out[28:], 1)     // max_pages
		case fuseLookup:
			if strings.TrimRight(string(body), "\x00") != f.name || node != 1 {
				errno = -int32(unix.ENOENT)
				break
			}
			out = make([]byte, 40+88)
			le.PutUint64(out[0:], 2) // nodeid
			f.attr(out[40:], 2)
		case fuseGetattr:
			out = make([]byte, 16+88)
			f.attr(out[16:], node)
		case fuseOpen:
			out = make([]byte, 16)
		case fuseRead:
			off, size := le.Uint64(body[8:]), le.Uint32(body[16:])
			if off < uint64(len(f.data)) {
				out = f.data[off:min(off+uint64(size), uint64(len(f.data)))]
			}
		case fuseStatfs:
			out = make([]byte, 80)
			le.PutUint32(out[48:], 255) // namelen
			le.PutUint32(out[52:], 4096)
		case fuseRelease, fuseFlush:
		case fuseForget:
			continue // no answer
		case fuseDestroy:
			return
		case fusePoll:
			f.polled.Store(true)
			errno = -int32(unix.ENOSYS)
		default:
			errno = -int32(unix.ENOSYS)
		}
		if errno != 0 {
			out = nil
		}
		hdr := make([]byte, 16, 16+len(out))
		le.PutUint32(hdr[0:], uint32(16+len(out)))
		le.PutUint32(hdr[4:], uint32(errno))
		le.PutUint64(hdr[8:], unique)
		unix.Write(f.fd, append(hdr, out...))
	}
}

// attr writes struct fuse_attr for node: the root directory (1) or the
// file (2), owned by root.
func (f *fuseFile) attr(b []byte, node uint64) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], node)
	mode, size, nlink := uint32(unix.S_IFDIR|0o755), uint64(0), uint32(2)
	if node == 2 {
		mode, size, nlink = unix.S_IFREG|0o755, uint64(len(f.data)), 1
	}
	le.PutUint64(b[8:], size)
	le.PutUint64(b[16:], (size+511)/512)
	le.PutUint32(b[60:], mode)
	le.PutUint32(b[64:], nlink)
	// uid, gid (68, 72): 0, root
	le.PutUint32(b[80:], 4096) // blksize
}

// TestNewRefusesInitProgramOnFUSE serves the real checkfu-jail-init
// program from a FUSE file system the test runs, claiming root owns it:
// a FUSE daemon (any user who may mount one) chooses the owner and mode
// New checks and may serve other bytes to each jail's exec later, so
// New refuses the file system itself. The control: the same bytes from
// the local disk are accepted.
func TestNewRefusesInitProgramOnFUSE(t *testing.T) {
	prog := mustInitProgram(t)
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jail.New(jail.Config{InitProgram: prog}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("control: jail.New: %v", err)
		}
		t.Skipf("control: jail.New: %v", err)
	}
	f := mountFUSE(t, "checkfu-jail-init", data)
	path := f.dir + "/checkfu-jail-init"
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Uid != 0 || st.Mode&0o777 != 0o755 {
		t.Fatalf("control: the FUSE file: %+v, %v", st, err)
	}
	_, err = jail.New(jail.Config{InitProgram: path})
	if !errors.Is(err, checkfu.CodeConfigInvalid) || !strings.Contains(err.Error(), "FUSE") {
		t.Errorf("jail.New with an init program on FUSE = %v, want config_invalid naming FUSE", err)
	}
	if f.polled.Load() {
		t.Error("jail.New's open of the init program asked the FUSE daemon FUSE_POLL: Go's runtime polls the file, and a daemon that never answers stops the Runner")
	}
}
