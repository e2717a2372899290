package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// InitArg is the first argument that makes [InitMain] act as the init
// stage of a jail.
const InitArg = "checkfu-jail-init"

// syncFD is the descriptor of the init stage's end of the sync socket
// (the first of exec.Cmd.ExtraFiles).
const syncFD = 3

// maxConfigBytes bounds the configuration the parent sends the init
// stage: argv and environment included.
const maxConfigBytes = 1 << 20

// The messages of the sync socket. The parent sends the config, the init
// stage answers msgReady (locks applied, before exec) or msgError, the
// parent answers msgGo once it has read the jail back, and the exec
// closes the socket (close-on-exec): EOF after msgGo means the workload
// runs.
const (
	msgReady = 'R'
	msgError = 'E'
	// msgExecError: the workload's command could not be found or
	// executed.
	msgExecError = 'X'
	msgGo        = 'G'
)

// initConfig is what the parent tells the init stage. Descriptors are
// numbers in the init stage (ExtraFiles from 3 on).
type initConfig struct {
	SystemDirs []string    `json:"system_dirs"`
	Binds      []initBind  `json:"binds"`
	Hostname   string      `json:"hostname"`
	Argv       []string    `json:"argv"`
	Env        []string    `json:"env"`
	Dir        string      `json:"dir"`
	Landlock   int         `json:"landlock"`
	Relay      []relayPort `json:"relay,omitempty"`
	NoFile     uint64      `json:"nofile"`
	// CgroupTasks are the descriptors of the groups' tasks files, which
	// the init stage writes to join them (see cgroup.taskFiles).
	CgroupTasks []int `json:"cgroup_tasks,omitempty"`
	// Check, when set, makes the init stage only report that it runs in
	// its namespaces, and exit 0: the provider's start-up trial.
	Check bool `json:"check,omitempty"`
}

// maxBinds bounds the binds of one jail (the descriptors of one
// message).
const maxBinds = 64

// initBind is one bind mount from a descriptor the parent opened
// (O_PATH, in the init stage's mount namespace) to a path in the jail;
// FD is its index among the descriptors sent with the config.
type initBind struct {
	FD       int    `json:"fd"`
	Target   string `json:"target"`
	Dir      bool   `json:"dir"`
	Writable bool   `json:"writable"`
}

// relayPort is a loopback TCP port the init stage listens on inside the
// jail's network namespace and hands to the parent.
type relayPort struct {
	Port int `json:"port"`
}

// readyReport is what the init stage reports with msgReady.
type readyReport struct {
	// Tid is the thread that applied the locks and will exec.
	Tid int `json:"tid"`
	// Landlock is the Landlock ABI whose ruleset the thread is
	// restricted by.
	Landlock int `json:"landlock"`
}

// InitMain makes the current binary act as a jail's init stage when its
// first argument is [InitArg]: it builds the jail's root, applies the
// locks and execs the workload, and never returns. Call it first thing
// in main (and in TestMain); otherwise it returns at once.
func InitMain() {
	if len(os.Args) < 2 || os.Args[1] != InitArg {
		return
	}
	runtime.LockOSThread() // the locks are per thread: apply them and exec on this one
	err := initStage()
	kind := byte(msgError)
	var ee execError
	if errors.As(err, &ee) {
		kind = msgExecError
	}
	reply(append([]byte{kind}, err.Error()...))
	os.Exit(126)
}

func reply(b []byte) { unix.Write(syncFD, b) }

func initStage() error {
	// Nothing open here reaches the workload: the sync socket, the
	// groups' tasks files, the bind sources, and whatever the Runner's
	// own process inherited without close-on-exec from its parent
	// (os/exec passes those on to every child).
	if err := unix.CloseRange(syncFD, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close_range: %w", err)
	}
	buf := make([]byte, maxConfigBytes)
	oob := make([]byte, unix.CmsgSpace(4*maxBinds))
	n, oobn, _, _, err := unix.Recvmsg(syncFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
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
	var cfg initConfig
	if err := json.Unmarshal(buf[:n], &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if cfg.Check {
		reply([]byte{msgReady})
		os.Exit(0)
	}
	if err := joinCgroups(cfg.CgroupTasks); err != nil {
		return err
	}
	for i := range cfg.Binds {
		if cfg.Binds[i].FD >= len(fds) {
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
	dir := cfg.Dir
	if dir == "" {
		dir = WorkspacePath
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %q: %w", dir, err)
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	if err != nil {
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
	rep, _ := json.Marshal(readyReport{Tid: unix.Gettid(), Landlock: landlock})
	msg := append([]byte{msgReady}, rep...)
	if len(relayFDs) > 0 {
		if err := unix.Sendmsg(syncFD, msg, unix.UnixRights(relayFDs...), nil, 0); err != nil {
			return fmt.Errorf("send relay: %w", err)
		}
		for _, fd := range relayFDs {
			unix.Close(fd)
		}
	} else {
		reply(msg)
	}
	var g [1]byte
	if n, err := unix.Read(syncFD, g[:]); err != nil || n != 1 || g[0] != msgGo {
		os.Exit(125) // the parent refused the read-back or went away
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

// newRoot is where the init stage builds the jail's root: a tmpfs
// mounted over /tmp of its own (private) mount namespace, made the root
// by pivot_root.
const newRoot = "/tmp"

// buildRoot builds the jail's file system and makes it the root: the
// host's system directories read-only, the binds, a private /tmp,
// /proc of the jail's PID namespace, a minimal /dev, and a read-only
// root tmpfs holding only the mount points.
func buildRoot(cfg initConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("tmpfs", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount the root tmpfs: %w", err)
	}
	in := func(p string) string { return filepath.Join(newRoot, p) }
	for _, d := range cfg.SystemDirs {
		fi, err := os.Lstat(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			t, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := os.Symlink(t, in(d)); err != nil {
				return err
			}
			continue
		}
		if err := bindReadOnly(d, in(d), true, false); err != nil {
			return err
		}
	}
	for _, b := range cfg.Binds {
		if err := bindReadOnly("/proc/self/fd/"+strconv.Itoa(b.FD), in(b.Target), b.Dir, b.Writable); err != nil {
			return err
		}
	}
	if err := mkdirMount("tmpfs", in("/tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+strconv.Itoa(TmpBytes)); err != nil {
		return err
	}
	if err := mkdirMount("proc", in("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return err
	}
	if err := buildDev(in("/dev")); err != nil {
		return err
	}
	if err := unix.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("remount / read-only: %w", err)
	}
	return nil
}

func mkdirMount(src, target, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(src, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", fstype, strings.TrimPrefix(target, newRoot), err)
	}
	return nil
}

// bindReadOnly bind-mounts src on target (a directory or a file it
// creates), then remounts it nosuid and nodev, read-only unless
// writable, keeping the flags the source mount has locked.
func bindReadOnly(src, target string, dir, writable bool) error {
	if dir {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	shown := strings.TrimPrefix(target, newRoot)
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", shown, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV)
	if !writable {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_RDONLY, unix.MS_RDONLY}, {unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s: %w", shown, err)
	}
	return nil
}

// devices are the host device nodes the jail's /dev holds.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

func buildDev(dev string) error {
	if err := mkdirMount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, d := range devices {
		f, err := os.OpenFile(filepath.Join(dev, d), os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return err
		}
		f.Close()
		if err := unix.Mount("/dev/"+d, filepath.Join(dev, d), "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
	}
	for name, t := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(t, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return mkdirMount("tmpfs", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size="+strconv.Itoa(TmpBytes))
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
	// The parent-death signal set at the clone ([initCommand]) holds:
	// the kernel clears it only on a change of identity or a set-id
	// exec, and the capability drop above and no_new_privs make
	// neither (TestParentDeathEndsTheJail proves it).
	return nil
}
