package initstage

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Main makes the process a jail's init stage when its first argument is
// [Arg]: it builds the jail's root, applies the locks and execs the
// workload, and never returns. Otherwise it returns at once.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	runtime.LockOSThread() // the locks are per thread: apply them and exec on this one
	err := run()
	kind := byte(MsgError)
	var ee execError
	if errors.As(err, &ee) {
		kind = MsgExecError
	}
	reply(append([]byte{kind}, err.Error()...))
	os.Exit(126)
}

func reply(b []byte) { unix.Write(SyncFD, b) }

func run() error {
	// Nothing open here reaches the workload: the sync socket, the
	// groups' tasks files, the bind sources, and whatever the Runner's
	// own process inherited without close-on-exec from its parent
	// (os/exec passes those on to every child).
	if err := unix.CloseRange(SyncFD, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close_range: %w", err)
	}
	buf := make([]byte, MaxConfigBytes)
	oob := make([]byte, unix.CmsgSpace(4*MaxBinds))
	n, oobn, _, _, err := unix.Recvmsg(SyncFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if r, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	cfg, err := DecodeConfig(buf[:n])
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if cfg.Check {
		reply(append([]byte{MsgReady}, Protocol...))
		os.Exit(0)
	}
	if len(cfg.Argv) == 0 {
		return errors.New("config: no command")
	}
	for i := range cfg.Binds {
		if cfg.Binds[i].FD < 0 || cfg.Binds[i].FD >= len(fds) {
			return fmt.Errorf("bind %q: no descriptor", cfg.Binds[i].Target)
		}
		cfg.Binds[i].FD = fds[cfg.Binds[i].FD]
	}
	if err := buildRoot(cfg); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	var relayFDs []int
	for _, r := range cfg.Relay {
		fd, err := listenLoopback(r.Port)
		if err != nil {
			return err
		}
		relayFDs = append(relayFDs, fd)
	}
	for _, r := range []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_CORE, 0}, {unix.RLIMIT_NOFILE, cfg.NoFile}} {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.res, err)
		}
	}
	if err := unix.Chdir(cfg.Dir); err != nil {
		return fmt.Errorf("chdir %q: %w", cfg.Dir, err)
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	if err != nil {
		return err
	}
	// The provider made the groups while this stage started and built
	// the root; this thread, the one that execs, joins them before any
	// lock, and the provider's read-back checks that it did.
	tasks, err := recvCgroups(SyncFD, cfg.Cgroups)
	if err != nil {
		return err
	}
	if err := joinCgroups(tasks); err != nil {
		return err
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	landlock, err := restrictFiles(cfg.Landlock, ruleset(cfg))
	if err != nil {
		return err
	}
	if err := installSeccomp(); err != nil {
		return err
	}
	msg := append([]byte{MsgReady}, Ready{Tid: unix.Gettid(), Landlock: landlock}.Encode()...)
	if len(relayFDs) > 0 {
		if err := unix.Sendmsg(SyncFD, msg, unix.UnixRights(relayFDs...), nil, 0); err != nil {
			return fmt.Errorf("send relay: %w", err)
		}
		for _, fd := range relayFDs {
			unix.Close(fd)
		}
	} else {
		reply(msg)
	}
	var g [1]byte
	if n, err := unix.Read(SyncFD, g[:]); err != nil || n != 1 || g[0] != MsgGo {
		os.Exit(125) // the parent refused the read-back or went away
	}
	// The parent-death signal the Runner asked for at the clone is the
	// first thread's; a thread's own starts unset, and this one may not
	// be the first (Main's caller decides which thread its goroutine is
	// on). The exec keeps only this thread, so it is armed here too, now
	// that the Runner has just answered: its death from here on kills the
	// jail, before the exec (through the first thread) and after it.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	err = unix.Exec(path, cfg.Argv, cfg.Env)
	return execError{fmt.Errorf("exec %q: %w", cfg.Argv[0], err)}
}

// An execError is a workload command that could not be found or
// executed, as opposed to a jail that could not be built.
type execError struct{ error }

// lookPath finds argv0 in the PATH of env, inside the jail.
func lookPath(argv0 string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		return argv0, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", p)
		}
	}
	p, err := exec.LookPath(argv0)
	if err != nil {
		return "", execError{fmt.Errorf("%q not found in the jail's PATH", argv0)}
	}
	return p, nil
}

// loopbackUp brings up lo, the only interface of the jail's network
// namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// listenLoopback listens on 127.0.0.1:port in the jail's network
// namespace; the descriptor goes to the parent, which serves it.
func listenLoopback(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("relay bind 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// dropPrivileges locks the securebits (no root semantics, no ambient
// raise), empties the bounding, ambient, inheritable, permitted and
// effective capability sets, and sets no_new_privs: after exec the
// workload holds no capability, even in its own user namespace, and no
// setuid binary or file capability gives one back.
func dropPrivileges() error {
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS (locked, off), NO_CAP_AMBIENT_RAISE, each locked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits&^(1<<4), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = v
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	// The parent-death signal set at the clone (by the provider) holds:
	// the kernel clears it only on a change of identity or a set-id
	// exec, and the capability drop above and no_new_privs make
	// neither (TestParentDeathEndsTheJail proves it).
	return nil
}

// recvCgroups reads the [MsgCgroups] message from sock when n is not
// zero and returns its descriptors, exactly n of them (at most
// [MaxCgroups]), or an error, having closed whatever it received.
func recvCgroups(sock, n int) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	if n < 0 || n > MaxCgroups {
		return nil, fmt.Errorf("%d cgroups asked, at most %d", n, MaxCgroups)
	}
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*MaxCgroups))
	m, oobn, flags, _, err := unix.Recvmsg(sock, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("read the cgroups: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, cm := range msgs {
			if r, err := unix.ParseUnixRights(&cm); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	if m != 1 || b[0] != MsgCgroups || flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 || len(fds) != n {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("the cgroups message holds %d descriptors, not %d", len(fds), n)
	}
	return fds, nil
}

// isCgroupFile refuses a descriptor that is not a regular file of a
// cgroup file system (v1 or v2): joinCgroups writes to each, and writes
// nothing anywhere else, whatever it was sent.
func isCgroupFile(fd int) error {
	var fs unix.Statfs_t
	var st unix.Stat_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return fmt.Errorf("join cgroup: %w", err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("join cgroup: %w", err)
	}
	if (fs.Type != unix.CGROUP_SUPER_MAGIC && fs.Type != unix.CGROUP2_SUPER_MAGIC) || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("join cgroup: a descriptor that is not a cgroup file (file system %#x, mode %#o)", fs.Type, st.Mode)
	}
	return nil
}

// joinCgroups moves the calling thread into the group of each tasks
// descriptor in fds (the provider opened them) and closes them. The caller has
// its thread locked: it is the thread that execs the workload, and has
// marked every descriptor close-on-exec.
func joinCgroups(fds []int) error {
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, fd := range fds {
		if err := isCgroupFile(fd); err != nil {
			return err
		}
	}
	for _, fd := range fds {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	return nil
}
