package initstage

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LandlockABI returns the Landlock ABI version the kernel offers, or 0
// when it has none (not built, or not enabled at boot).
func LandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// The access rights the rules grant.
const (
	fsRead  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsExec  = fsRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsDev = fsRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every file-system right Landlock ABI abi knows: the
// ruleset denies each of them outside the rules.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: execute through make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// A landlockRule grants access beneath a path of the jail.
type landlockRule struct {
	path   string
	access uint64
}

// ruleset is the jail's Landlock rules: the system directories and the
// read-only binds may be read and executed, the workspace, /tmp and
// /dev/shm written, the device nodes read and written, /proc read.
// Nothing else (not even the root directory itself) is reachable
// through open.
func ruleset(cfg Config) []landlockRule {
	var rs []landlockRule
	for _, d := range cfg.SystemDirs {
		rs = append(rs, landlockRule{d, fsExec})
	}
	for _, b := range cfg.Binds {
		a := uint64(fsExec)
		if b.Writable {
			a |= fsWrite
		}
		rs = append(rs, landlockRule{b.Target, a})
	}
	return append(rs,
		landlockRule{"/tmp", fsExec | fsWrite},
		landlockRule{"/dev/shm", fsRead | fsWrite},
		landlockRule{"/dev", fsDev},
		landlockRule{"/proc", fsRead},
	)
}

// landlockAttr is struct landlock_ruleset_attr up to the scoped member
// (ABI 6).
type landlockAttr struct {
	fs, net, scoped uint64
}

// restrictFiles restricts the calling thread (and what it execs) to
// rules under Landlock ABI abi. A rule's path that does not exist in
// the jail is skipped (a system directory the host lacks); its rights
// are masked to what the ABI handles. abi 0 is refused: the jail never
// runs without it. It returns the ABI of the ruleset it applied.
func restrictFiles(abi int, rules []landlockRule) (int, error) {
	if abi < 1 {
		return 0, fmt.Errorf("landlock: no ABI")
	}
	h := handledFS(abi)
	attr := landlockAttr{fs: h}
	size := unsafe.Offsetof(attr.net)
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(attr)
	} else if abi >= 4 {
		size = unsafe.Offsetof(attr.scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("landlock: open %q: %w", r.path, err)
		}
		var st unix.Stat_t
		access := r.access & h
		if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A file rule may hold only the rights that apply to files.
			access &= unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
				unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
		}
		pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
		unix.Close(pfd)
		if errno != 0 {
			return 0, fmt.Errorf("landlock_add_rule %q: %w", r.path, errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return 0, fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return abi, nil
}
