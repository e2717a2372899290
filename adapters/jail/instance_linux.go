package jail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/deadowner"
	"github.com/checkfu/checkfu/adapters/internal/procset"
	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
	"golang.org/x/sys/unix"
)

// StartTimeout bounds how long the init stage may take to build a jail
// and answer; a jail that outlives it is killed and refused.
const StartTimeout = 10 * time.Second

// ReapTimeout bounds how long Destroy waits for the killed jail to be
// reaped, whatever its context. SIGKILL to the jail's PID 1 ends every
// process of its PID namespace at once, so a jail still there after
// this is stuck in the kernel (an uninterruptible wait): Destroy then
// releases the rest, as when its context ends, and says so.
const ReapTimeout = 10 * time.Second

// errNotReaped is Destroy's error when the killed jail outlived
// ReapTimeout.
var errNotReaped = fmt.Errorf("jail: the killed jail was not reaped within %v: %w", ReapTimeout, context.DeadlineExceeded)

// jailUID is the host identity a jail's root maps to: nobody when the
// host runs as root, the host's own user otherwise (the only one an
// unprivileged user may map).
func jailUID() (uid, gid int) {
	if os.Geteuid() == 0 {
		return 65534, 65534
	}
	return os.Geteuid(), os.Getegid()
}

type instance struct {
	p    *Provider
	spec adapters.InstanceSpec
	dir  string // the instance's host directory; the workspace is in it
	ws   string
	// bounded: ws is the tmpfs of Config.WorkspaceBytes newInstance
	// mounted, which Destroy unmounts.
	bounded bool

	broker    string       // CreateWithBroker's directory, or ""
	guard     string       // the guard's socket, for allowlist
	stopGuard func() error // stops the guard, or nil

	proc procset.Set
	// kill kills a jail by the host pid of its PID 1: killJail; a test
	// sets another before the instance's first process.
	kill func(pid int) error
}

func (p *Provider) newInstance(ctx context.Context, spec adapters.InstanceSpec, broker string) (adapters.Instance, error) {
	dir, err := os.MkdirTemp("", instanceDirPrefix+deadowner.Self()+"-")
	if err != nil {
		return nil, err
	}
	ws := filepath.Join(dir, "workspace")
	uid, gid := jailUID()
	if err := os.Mkdir(ws, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	bounded := p.support.Cgroups
	if bounded {
		opts := fmt.Sprintf("mode=0755,uid=%d,gid=%d,size=%d", uid, gid, p.cfg.WorkspaceBytes)
		if err := unix.Mount("tmpfs", ws, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("jail: bound the workspace: %w", err)
		}
	}
	spec.AllowedHosts = slices.Clone(spec.AllowedHosts)
	i := &instance{p: p, spec: spec, dir: dir, ws: ws, bounded: bounded, broker: broker, kill: killJail}
	if spec.NetworkMode == "allowlist" {
		sock, stop, err := p.cfg.Guard(ctx, spec.AllowedHosts)
		if err != nil {
			if bounded {
				// The tmpfs is this Runner's until it dies: a live
				// Runner's mounts are never swept.
				if uerr := unix.Unmount(ws, unix.MNT_DETACH); uerr != nil {
					return nil, errors.Join(err, fmt.Errorf("jail: unmount the workspace: %w", uerr))
				}
			}
			os.RemoveAll(dir)
			return nil, err
		}
		i.guard, i.stopGuard = sock, stop
	}
	return i, nil
}

// instanceDirPrefix begins the name of an instance's host directory in
// the temporary directory, followed by the Runner's owner name (its pid
// and PID namespace, see deadowner) and "-": a dead Runner's bounded
// workspaces are known by it ([sweepWorkspaces]).
const instanceDirPrefix = "checkfu-jail-"

// sweepWorkspaces unmounts and removes the bounded workspaces of dead
// Runners: a Runner killed outright never destroys its instances, and
// the tmpfs of each would hold its pages until the host restarts. Only
// mounts of the form TMPDIR/checkfu-jail-OWNER-*/workspace are touched
// (mounts only root makes), and only where the owner is dead
// ([deadowner.Orphan]: of this PID namespace, and no process has its pid
// there): a reused pid keeps its mounts, as it keeps its cgroups, and a
// Runner of another PID namespace sharing TMPDIR keeps its own. The instance
// directory is opened once, never through a link, and must be a
// directory this user owns of mode 0700; the unmount and the removals
// go through that descriptor ([sweepWorkspace]), so a name swapped
// after the checks (in a temporary directory others may rename in)
// makes it unmount or remove nothing else.
func sweepWorkspaces() {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	tmp := filepath.Clean(os.TempDir())
	tfd, err := unix.Open(tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(tfd)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || filepath.Base(f[4]) != "workspace" || filepath.Dir(filepath.Dir(f[4])) != tmp {
			continue
		}
		name := filepath.Base(filepath.Dir(f[4]))
		if !deadowner.Orphan(name, instanceDirPrefix) {
			continue
		}
		sweepWorkspace(tfd, tmp, name)
	}
}

// sweepWorkspace unmounts and removes the instance directory name of
// tmp (open as tfd) through a descriptor of it: see [sweepWorkspaces].
func sweepWorkspace(tfd int, tmp, name string) {
	fd, ok := openOwnDir(tfd, name)
	if !ok {
		return
	}
	defer unix.Close(fd)
	if sweepRaceForTest != nil {
		sweepRaceForTest(filepath.Join(tmp, name))
	}
	// The descriptor's own path in /proc names the directory opened,
	// whatever its name became; no link is followed at "workspace".
	if unix.Unmount("/proc/self/fd/"+strconv.Itoa(fd)+"/workspace", unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW) != nil {
		return
	}
	unix.Unlinkat(fd, "workspace", unix.AT_REMOVEDIR)
	// By name, but only an empty directory goes: a link or anything
	// put at the name since is kept.
	unix.Unlinkat(tfd, name, unix.AT_REMOVEDIR)
}

// openOwnDir opens name in the directory tfd without following a link
// and reports whether it is a directory this user owns, of mode 0700:
// one only this user could have filled.
func openOwnDir(tfd int, name string) (int, bool) {
	fd, err := unix.Openat(tfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o7777 != 0o700 || int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// sweepRaceForTest, when a test sets it, runs between a sweep's checks
// of a directory and its removal, with the directory's path: the test
// swaps the name there, as a local user racing the sweep would.
var sweepRaceForTest func(dir string)

// sweepGuardDirs removes the guard socket directories of dead Runners:
// a Runner killed outright never stops its guards, and each left a
// directory holding its socket. Only TMPDIR/checkfu-jail-guard-OWNER-*
// is touched, where the owner is dead ([deadowner.Orphans]: of this PID
// namespace, and no process has its pid there), and only a directory
// (never a link) this user owns, of mode 0700, holding nothing but
// guard.sock: the temporary directory is everyone's, so a name that
// matches proves nothing of who made it. The checks and the removal of
// the socket go through one descriptor of the directory, opened
// without following a link, so a name swapped after the checks makes
// it remove nothing else.
func sweepGuardDirs() {
	tmp := filepath.Clean(os.TempDir())
	for tfd, name := range deadowner.Orphans(tmp, guardDirPrefix) {
		sweepGuardDir(tfd, filepath.Join(tmp, name))
	}
}

// sweepGuardDir removes the guard directory dir (a name in the
// directory tfd) through a descriptor of it: see [sweepGuardDirs].
func sweepGuardDir(tfd int, dir string) {
	fd, ok := openOwnDir(tfd, filepath.Base(dir))
	if !ok {
		return
	}
	d := os.NewFile(uintptr(fd), dir) // closes fd
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil || slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() != "guard.sock" }) {
		return
	}
	if sweepRaceForTest != nil {
		sweepRaceForTest(dir)
	}
	unix.Unlinkat(fd, "guard.sock", 0)
	// By name, but only an empty directory goes: a link or anything
	// put at the name since is kept.
	unix.Unlinkat(tfd, filepath.Base(dir), unix.AT_REMOVEDIR)
}

func (i *instance) ID() string { return i.spec.ID }

// OpenProcess starts spec in a fresh jail of the instance, in
// spec.Dir (a path in the jail) or the workspace, with an environment of
// PATH, HOME, TMPDIR (and, for allowlist, the relay as proxy) plus
// spec.Env, whose assignment of a name is the one the process sees:
// nothing of the Runner's own.
func (i *instance) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	return i.proc.Open(ctx, "jail", spec, func() (*procset.Process, error) { return i.start(ctx, spec) })
}

// Destroy kills the live jail, if any (every process of its PID
// namespace dies with it), waits for it, removes this Runner's parent
// cgroups once no other jail holds a group in them (each jail's own
// groups are removed as it is reaped), stops the instance's guard and
// unmounts and removes the workspace. The jail's relays close every
// connection they carry as it is reaped; the guard's stop waits
// [GuardStopGrace] at most for the connections it relays, then closes
// them: no connection, held by a workload or by an upstream that never
// answers, holds Destroy longer.
//
// When ctx ends before the killed jail is reaped, or [ReapTimeout]
// passes, Destroy still releases the rest and returns ctx's error (or
// one that wraps context.DeadlineExceeded) with anything else: it runs
// once, so nothing would release them later. The jail was sent SIGKILL; its
// cgroup goes when it is reaped, and a workspace still open in it is
// detached from the host's tree at once and freed when it exits.
func (i *instance) Destroy(ctx context.Context) error {
	reap, cancel := context.WithTimeout(ctx, ReapTimeout)
	defer cancel()
	first, err := i.proc.Destroy(reap)
	if !first {
		return err
	}
	if err != nil && ctx.Err() == nil {
		err = errNotReaped
	}
	removeParents()
	if i.stopGuard != nil {
		err = errors.Join(err, i.stopGuard())
	}
	if i.bounded {
		if uerr := unix.Unmount(i.ws, unix.MNT_DETACH); uerr != nil {
			return errors.Join(err, fmt.Errorf("jail: unmount the workspace: %w", uerr))
		}
	}
	return errors.Join(err, os.RemoveAll(i.dir))
}

// env is a jail process's whole environment.
func (i *instance) env(extra []string) []string {
	env := []string{"PATH=" + DefaultPath, "HOME=" + WorkspacePath, "TMPDIR=/tmp"}
	if i.spec.NetworkMode == "allowlist" {
		proxy := "http://127.0.0.1:" + strconv.Itoa(RelayPort)
		env = append(env, "http_proxy="+proxy, "https_proxy="+proxy, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy)
	}
	return lastWins(append(env, extra...))
}

// lastWins returns env with one assignment per name: the last one, at the
// place of the name's first, as os/exec does for the process provider and
// Docker for its containers. The init stage execs with the list as it is,
// and a program reads the first of two assignments (Go's os.Getenv and
// Node's process.env both do), so without it the jail would run a spec
// with another value than the process provider runs it with. An entry
// without "=" is kept as it is.
func lastWins(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			last[k] = i
		}
	}
	out := make([]string, 0, len(last))
	placed := make(map[string]bool, len(last))
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			out = append(out, kv)
		case !placed[k]:
			placed[k] = true
			out = append(out, env[last[k]])
		}
	}
	return out
}

// start builds one jail and starts spec in it, or refuses: the init
// stage's failure is CodeJailStartFailed (wire's process_start_failed
// for a command that cannot be found or executed), a read-back that
// differs from the plan CodeReadBackMismatch. Nothing of the workload
// runs before the read-back passed.
func (i *instance) start(ctx context.Context, spec adapters.ProcessSpec) (_ *procset.Process, err error) {
	var cleanup []func()
	defer func() {
		if err != nil {
			for _, f := range slices.Backward(cleanup) {
				f()
			}
		}
	}()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	childSync := os.NewFile(uintptr(fds[1]), "jail-sync-child")
	defer childSync.Close()
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	parentFile := os.NewFile(uintptr(fds[0]), "jail-sync")
	fc, err := net.FileConn(parentFile)
	parentFile.Close()
	if err != nil {
		return nil, err
	}
	sync := fc.(*net.UnixConn)
	cleanup = append(cleanup, func() { sync.Close() })

	cfg := initstage.Config{
		SystemDirs: i.p.sys, Hostname: Hostname, Argv: spec.Argv, Env: i.env(spec.Env), Dir: spec.Dir,
		Landlock: i.p.support.Landlock, NoFile: NoFile, TmpBytes: TmpBytes,
	}
	if cfg.Dir == "" {
		cfg.Dir = WorkspacePath
	}
	// Bind sources are opened by the Runner in the init stage's own
	// mount namespace, once it exists (a mount of another namespace
	// cannot be bound), and handed over with the config.
	var sources []string
	bind := func(src, target string, dir, writable bool) {
		cfg.Binds = append(cfg.Binds, initstage.Bind{FD: len(sources), Target: target, Dir: dir, Writable: writable})
		sources = append(sources, src)
	}
	bind(i.ws, WorkspacePath, true, true)
	for _, b := range i.p.cfg.Binds {
		fi, err := os.Stat(b.Source)
		if err != nil {
			return nil, checkfu.Refuse(CodeJailStartFailed, "jail: bind source %s: %v", checkfu.Quote(b.Source), err)
		}
		bind(b.Source, b.Target, fi.IsDir(), false)
	}
	if i.broker != "" {
		bind(i.broker, BrokerMount, true, false)
	}
	if i.spec.NetworkMode == "allowlist" {
		cfg.Relay = []initstage.Relay{{Port: RelayPort}}
	}
	if i.p.support.Cgroups {
		cfg.Cgroups = len(controllers)
	}
	config := cfg.Encode()
	if len(config) > initstage.MaxConfigBytes {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "jail: the process's argv and environment exceed %d bytes", initstage.MaxConfigBytes)
	}

	pipes, err := procset.NewPipes()
	if err != nil {
		return nil, err
	}
	defer pipes.CloseChild()
	cleanup = append(cleanup, pipes.Close)

	cmd := initCommand()
	pipes.Attach(cmd)
	cmd.ExtraFiles = []*os.File{childSync}
	i.p.attachInit(cmd)
	if err := cmd.Start(); err != nil {
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: the init stage did not start: %v", err)
	}
	var cg *cgroup // made once the stage runs (below)
	reap := func() {
		cmd.Process.Kill()
		cmd.Wait()
		if cg != nil { // only now: a group the stage joined cannot go before it
			cg.remove()
		}
	}
	cleanup = append(cleanup, reap)
	childSync.Close()
	deadline := time.Now().Add(StartTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	sync.SetDeadline(deadline)
	if err := sendConfig(sync, cmd.Process.Pid, config, sources); err != nil {
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: send the config: %v", err)
	}
	// The groups are made while the stage starts and builds the root
	// (it joins them after, before any lock): the Runner would otherwise
	// wait for the stage with nothing to do.
	if i.p.support.Cgroups {
		if cg, err = newCgroup(i.spec.ID+"-"+randomName(), i.spec.Limits); err != nil {
			return nil, checkfu.Refuse(CodeJailStartFailed, "jail: %v", err)
		}
		if err := sendCgroups(sync, cg); err != nil {
			// A stage that failed on its config closed the socket
			// first: its own message says why.
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
				if msg, _, rerr := readSync(sync); rerr == nil {
					if ferr := initFailure(msg, spec.Argv[0]); ferr != nil {
						return nil, ferr
					}
				}
			}
			return nil, checkfu.Refuse(CodeJailStartFailed, "jail: send the cgroups: %v", err)
		}
	}
	// While the init stage builds the jail: what the read-back compares
	// it with.
	plan := planReadBack(cfg, cg)
	msg, relayFDs, err := readSync(sync)
	var relays []net.Listener
	for _, fd := range relayFDs {
		f := os.NewFile(uintptr(fd), "jail-relay")
		ln, lerr := net.FileListener(f)
		f.Close()
		if lerr != nil {
			return nil, lerr
		}
		relays = append(relays, ln)
		cleanup = append(cleanup, func() { ln.Close() })
	}
	if err == nil && i.spec.NetworkMode == "allowlist" && len(relays) != 1 {
		err = errors.New("no relay listener")
	}
	if err != nil {
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: the init stage did not answer: %v", err)
	}
	if err := initFailure(msg, spec.Argv[0]); err != nil {
		return nil, err
	}
	rep, err := initstage.DecodeReady(msg[1:])
	if err != nil {
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: the init stage's report: %v", err)
	}
	rb := readBack(cmd.Process.Pid, rep, plan)
	ev := i.evidence(rb)
	if ev.Enforcement != i.p.desc.Capability.Enforcement || ev.Limits != i.spec.Limits {
		return nil, checkfu.Refuse(CodeReadBackMismatch, "jail: the kernel's read-back of the jail differs from the plan: %s", rb)
	}
	if _, err := sync.Write([]byte{initstage.MsgGo}); err != nil {
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: %v", err)
	}
	msg, _, err = readSync(sync)
	if !errors.Is(err, io.EOF) {
		if ferr := initFailure(msg, spec.Argv[0]); ferr != nil {
			return nil, ferr
		}
		return nil, checkfu.Refuse(CodeJailStartFailed, "jail: the workload did not start: %v", err)
	}
	sync.Close()

	var served []*relay
	for _, ln := range relays {
		served = append(served, startJailRelay(ln, i.guard))
	}
	pipes.CloseChild()
	return i.proc.Watch(cmd, pipes, ev, func(c *exec.Cmd) error { return i.kill(c.Process.Pid) }, func() {
		if cg != nil {
			cg.remove()
		}
		// The jail is reaped: nothing in it can use a relayed
		// connection any more, so each is closed now, both sides.
		for _, r := range served {
			r.stop(expired)
		}
	}), nil
}

// sendConfig opens each source in the mount namespace of the init
// stage pid (resolved in its root) and sends them with config.
func sendConfig(c *net.UnixConn, pid int, config []byte, sources []string) error {
	root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, src := range sources {
		fd, err := unix.Openat2(root, src, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
		if err != nil {
			return fmt.Errorf("open %s: %w", checkfu.Quote(src), err)
		}
		fds = append(fds, fd)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err = c.WriteMsgUnix(config, oob, nil)
	return err
}

// sendCgroups sends the init stage the tasks file of each of cg's
// groups, in a [initstage.MsgCgroups] message, and closes its own.
func sendCgroups(c *net.UnixConn, cg *cgroup) error {
	tasks, err := cg.taskFiles()
	if err != nil {
		return err
	}
	fds := make([]int, len(tasks))
	for k, f := range tasks {
		fds[k] = int(f.Fd())
	}
	_, _, err = c.WriteMsgUnix([]byte{initstage.MsgCgroups}, unix.UnixRights(fds...), nil)
	for _, f := range tasks {
		f.Close()
	}
	return err
}

// readSync reads one message of the sync socket, with the descriptors
// it carries; io.EOF when the init stage closed it (its exec).
func readSync(c *net.UnixConn) ([]byte, []int, error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err == nil {
			for _, m := range msgs {
				if r, err := unix.ParseUnixRights(&m); err == nil {
					fds = append(fds, r...)
				}
			}
		}
	}
	return buf[:n], fds, nil
}

// initFailure turns an error message of the init stage into a refusal,
// or nil for a ready message.
func initFailure(msg []byte, argv0 string) error {
	switch {
	case len(msg) > 0 && msg[0] == initstage.MsgReady:
		return nil
	case len(msg) > 0 && msg[0] == initstage.MsgExecError:
		return checkfu.Refuse(wire.CodeProcessStartFailed, "jail: %s did not start: %s", checkfu.Quote(argv0), checkfu.Quote(string(msg[1:])))
	case len(msg) > 0 && msg[0] == initstage.MsgError:
		return checkfu.Refuse(CodeJailStartFailed, "jail: the init stage failed: %s", checkfu.Quote(string(msg[1:])))
	}
	return checkfu.Refuse(CodeJailStartFailed, "jail: the init stage answered %s", checkfu.Quote(string(msg)))
}

// initCommand is the init stage, this binary again ([InitMain]), in new
// user, mount, PID, network, IPC, UTS and cgroup namespaces and a new
// session, its root mapped to the jail's host identity, killed if the
// Runner dies. With an init program, [Provider.attachInit] makes it that
// program once the ExtraFiles are set.
func initCommand() *exec.Cmd {
	uid, gid := jailUID()
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{"checkfu-jail", InitArg}, Env: []string{}}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
			unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		// Become the namespace's root (the jail identity outside), so the
		// exec keeps the capabilities the init stage needs in it.
		Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		// The first thread's; the stage arms the thread that execs
		// too. Before the exec, the Runner's death also closes the sync
		// socket, which ends the stage.
		Pdeathsig: syscall.SIGKILL,
		// A session of its own, with no controlling terminal: the
		// Runner's terminal (a developer's shell) is never the jail's
		// /dev/tty, to read what the user types, write to it or push
		// input into it (TIOCSTI); and the jail leaves the Runner's
		// process group, so kill(0) names no process outside it.
		Setsid: true,
	}
	return cmd
}

// attachInit makes cmd exec the init program New opened, if any,
// through its descriptor (so a file put at its path since is never
// run): the descriptor is passed as the last of cmd.ExtraFiles, the one
// number the child's descriptor shuffle leaves in place, and exec'd as
// /proc/self/fd/N. The init stage marks it close-on-exec with the rest.
// Call it after every other ExtraFile is set.
func (p *Provider) attachInit(cmd *exec.Cmd) {
	if p.init == nil {
		return
	}
	cmd.Path = "/proc/self/fd/" + strconv.Itoa(initstage.SyncFD+len(cmd.ExtraFiles))
	cmd.ExtraFiles = append(cmd.ExtraFiles, p.init)
}

func randomName() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// killJail sends SIGKILL to the jail's first process, PID 1 of its PID
// namespace: the kernel then kills every process of the namespace.
func killJail(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
