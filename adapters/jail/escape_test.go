//go:build linux

package jail_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
)

// escapeArg makes the test binary, bound in the jail at probePath, try
// one escape and print what happened. Exit 0: the escape worked; 1: it
// was stopped; 2: the try itself could not be set up.
const escapeArg = "checkfu-jail-escape"

// escapeMain runs when the test binary is started with escapeArg.
func escapeMain() {
	if len(os.Args) < 3 || os.Args[1] != escapeArg {
		return
	}
	runtime.LockOSThread()
	worked, msg := tryEscape(os.Args[2], os.Args[3:])
	fmt.Println(msg)
	if worked {
		os.Exit(0)
	}
	os.Exit(1)
}

func tryEscape(what string, args []string) (bool, string) {
	switch what {
	case "write": // create a file at each path; worked if any was created
		for _, p := range args {
			if err := os.WriteFile(p, []byte("x"), 0o644); err == nil {
				return true, "wrote " + p
			}
		}
		return false, "no path written"
	case "read": // read each path; worked if any was read
		for _, p := range args {
			if _, err := os.ReadFile(p); err == nil {
				return true, "read " + p
			}
		}
		return false, "no path read"
	case "ptrace": // attach to a child of our own, then to each pid given
		child := exec.Command("/bin/sleep", "30")
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		defer child.Process.Kill()
		pids := []int{child.Process.Pid}
		for _, a := range args {
			n, _ := strconv.Atoi(a)
			pids = append(pids, n)
		}
		for _, pid := range pids {
			if err := unix.PtraceAttach(pid); err == nil {
				return true, "attached to " + strconv.Itoa(pid)
			}
		}
		return false, "ptrace refused"
	case "unshare-mount": // a new user and mount namespace, then a mount
		// A single-threaded program first (a Go program cannot unshare a
		// user namespace): util-linux's unshare.
		if err := exec.Command("/usr/bin/unshare", "--user", "/bin/true").Run(); err == nil {
			return true, "unshare(1) made a user namespace"
		}
		if err := unix.Unshare(unix.CLONE_NEWUSER | unix.CLONE_NEWNS); err != nil {
			if err := unix.Mount("tmpfs", "/tmp", "tmpfs", 0, ""); err == nil {
				return true, "mounted without unshare"
			}
			return false, "unshare: " + err.Error()
		}
		if err := unix.Mount("tmpfs", "/tmp", "tmpfs", 0, ""); err != nil {
			return true, "unshared (mount: " + err.Error() + ")"
		}
		return true, "unshared and mounted"
	case "clone-userns": // a child in a new user namespace, through clone
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
		if err := cmd.Run(); err != nil {
			return false, "clone: " + err.Error()
		}
		return true, "started a child in a new user namespace"
	case "http": // GET through the proxy of the environment; prints the status and the guard's refusal code or the body
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
		resp, err := c.Get(args[0])
		if err != nil {
			return false, "get: " + err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		if code := resp.Header.Get(egress.RefusalHeader); code != "" {
			return false, strconv.Itoa(resp.StatusCode) + " " + code
		}
		return resp.StatusCode == 200, strconv.Itoa(resp.StatusCode) + " " + string(body)
	case "fds": // a descriptor beyond stdin, stdout and stderr still open after the listing
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return false, "list: " + err.Error()
		}
		var held []string
		for _, e := range ents {
			n, _ := strconv.Atoi(e.Name())
			link, err := os.Readlink("/proc/self/fd/" + e.Name())
			if n > 2 && !errors.Is(err, fs.ErrNotExist) { // the listing's own descriptor is closed by now
				held = append(held, e.Name()+" -> "+link)
			}
		}
		return len(held) > 0, "holds " + strings.Join(held, ", ")
	case "list": // list each directory
		for _, p := range args {
			if _, err := os.ReadDir(p); err == nil {
				return true, "listed " + p
			}
		}
		return false, "no directory listed"
	case "env": // the Runner's environment, here or through /proc
		for _, kv := range os.Environ() {
			if strings.Contains(kv, args[0]) {
				return true, "environment holds the canary"
			}
		}
		for _, p := range []string{"/proc/1/environ", "/proc/" + args[1] + "/environ"} {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(args[0])) {
				return true, p + " holds the canary"
			}
		}
		return false, "no canary"
	case "caps": // run a binary and report whether it gained a capability
		out, err := exec.Command(args[0], escapeArg, "mycaps").Output()
		if err != nil {
			return false, "run: " + err.Error()
		}
		if strings.TrimSpace(string(out)) != "0000000000000000" {
			return true, "capabilities " + string(out)
		}
		return false, "no capability"
	case "mycaps":
		b, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
				fmt.Print(strings.TrimSpace(v))
			}
		}
		os.Exit(0)
	case "tcp": // connect to each address; worked if any connected
		for _, a := range args {
			if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
				c.Close()
				return true, "connected to " + a
			}
		}
		return false, "no address reached"
	case "udp": // send a datagram to each address
		for _, a := range args {
			if c, err := net.Dial("udp", a); err == nil {
				c.Write([]byte("checkfu-jail-udp"))
				c.Close()
			}
		}
		return false, "sent (the host counts what arrived)"
	case "raw": // a raw IP socket, a packet socket, the kernel crypto API's, and VSOCK (to a VM's host)
		for _, f := range [][3]int{{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, {unix.AF_PACKET, unix.SOCK_RAW, 0x0300}, {unix.AF_ALG, unix.SOCK_SEQPACKET, 0}, {unix.AF_VSOCK, unix.SOCK_STREAM, 0}} {
			if fd, err := unix.Socket(f[0], f[1], f[2]); err == nil {
				unix.Close(fd)
				return true, "opened a raw socket of family " + strconv.Itoa(f[0])
			}
		}
		return false, "no raw socket"
	case "unix": // connect to each Unix socket (a leading @ is abstract)
		for _, a := range args {
			if c, err := net.DialTimeout("unix", a, time.Second); err == nil {
				c.Close()
				return true, "connected to " + a
			}
		}
		return false, "no socket reached"
	case "daemon": // leave a child behind that tries to outlive the jail
		cmd := exec.Command("/bin/sleep", args[0])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		return true, strconv.Itoa(cmd.Process.Pid)
	}
	if worked, msg, ok := tryRedTeam(what, args); ok {
		return worked, msg
	}
	os.Exit(2)
	return false, ""
}

// escape runs one try in a fresh instance of p and reports whether the
// escape worked, failing the test when the try could not be set up.
func escape(t *testing.T, p *jail.Provider, what string, args ...string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("escape-"+what, testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx) // now, not when the test ends: a test may try many escapes
	return runIn(t, inst, append([]string{probePath, escapeArg, what}, args...))
}

func runIn(t *testing.T, inst adapters.Instance, argv []string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr())
	out, _ := io.ReadAll(proc.Stdout())
	code, _ := proc.Wait()
	if code != 0 && code != 1 {
		t.Fatalf("%q: exit %d: %s", argv, code, out)
	}
	return code == 0, strings.TrimSpace(string(out))
}

const testDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000001"

func TestEscapeWriteOutsideWorkspace(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "write", jail.WorkspacePath+"/control", "/tmp/control"); !ok {
		t.Fatalf("control: the workspace and /tmp are not writable: %s", msg)
	}
	for _, path := range []string{"/x", "/usr/x", "/etc/x", "/bin/x", jail.BindRoot + "/x", probePath, "/proc/sys/kernel/hostname", "/dev/x"} {
		if ok, msg := escape(t, p, "write", path); ok {
			t.Errorf("write %s: %s", path, msg)
		}
	}
}

func TestEscapeOtherUsersFiles(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("anyone"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, jail.Config{Binds: []jail.Bind{{Source: dir, Target: jail.BindRoot + "/users"}}})
	if ok, msg := escape(t, p, "read", jail.BindRoot+"/users/open"); !ok {
		t.Fatalf("control: a world-readable file is not readable: %s", msg)
	}
	if os.Geteuid() == 0 {
		// The Runner is root: the jail's identity is nobody, so a file
		// only root may read stays closed, and so does /etc/shadow.
		if ok, msg := escape(t, p, "read", jail.BindRoot+"/users/secret", "/etc/shadow", "/etc/gshadow"); ok {
			t.Errorf("another user's file: %s", msg)
		}
	}
}

func TestEscapePtrace(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "ptrace", strconv.Itoa(os.Getpid()), "1"); ok {
		t.Errorf("ptrace: %s", msg)
	}
}

func TestEscapeUnshareAndMount(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "unshare-mount"); ok {
		t.Errorf("unshare and mount: %s", msg)
	}
}

func TestEscapeCloneNewNamespace(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "clone-userns"); ok {
		t.Errorf("clone: %s", msg)
	}
}

// TestLandlockConfinesOpen lists directories the mounts alone would
// show: the root and the bind root. Landlock has no rule for them.
func TestLandlockConfinesOpen(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "list", jail.WorkspacePath, "/usr"); !ok {
		t.Fatalf("control: the workspace and /usr cannot be listed: %s", msg)
	}
	if ok, msg := escape(t, p, "list", "/", jail.BindRoot); ok {
		t.Errorf("landlock: %s", msg)
	}
}

func TestEscapeHostEnvironment(t *testing.T) {
	canary := "CHECKFU_JAIL_CANARY_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Setenv(canary, "secret")
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "env", canary, strconv.Itoa(os.Getpid())); ok {
		t.Errorf("host environment: %s", msg)
	}
}

// TestEscapeInheritedDescriptors: the workload starts with stdin,
// stdout and stderr alone; nothing the Runner or the init stage opened
// (the sync socket, the groups' tasks files, the bind sources) is left
// open across the exec.
//
// The test holds a descriptor without close-on-exec, as a host process
// may have inherited one from its own parent: os/exec passes it to every
// child, so only the init stage can keep it from the workload.
func TestEscapeInheritedDescriptors(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "fds"); ok {
		t.Errorf("inherited descriptors: %s", msg)
	}
}

func TestEscapeSetuidBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a setuid-root binary needs root")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "checkfu-jail-suid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	suid := filepath.Join(dir, "suid")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o4755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	// Control: outside any jail, run as nobody, the binary gains root.
	ctl := exec.Command(suid, escapeArg, "mycaps")
	ctl.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := ctl.Output(); err != nil || strings.TrimSpace(string(out)) == "0000000000000000" {
		t.Fatalf("control: the setuid binary run by nobody on the host: %q, %v", out, err)
	}
	p := newProvider(t, jail.Config{Binds: []jail.Bind{{Source: dir, Target: jail.BindRoot + "/suid"}}})
	if ok, msg := escape(t, p, "caps", jail.BindRoot+"/suid/suid"); ok {
		t.Errorf("setuid binary: %s", msg)
	}
}

func TestEscapeOutlivesDestroy(t *testing.T) {
	p := newProvider(t, jail.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("escape-daemon", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	mark := strconv.Itoa(900000 + int(time.Now().UnixNano()%99999))
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "setsid /bin/sleep " + mark + " & nohup /bin/sleep " + mark + " >/dev/null 2>&1 & echo started; exec /bin/sleep " + mark}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("started\n"))
	if _, err := io.ReadFull(proc.Stdout(), buf); err != nil {
		t.Fatal(err)
	}
	for wait := time.Now().Add(5 * time.Second); len(sleepers(mark)) < 3 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(sleepers(mark)); n != 3 {
		t.Fatalf("control: %d sleepers of the jail seen on the host, want 3", n)
	}
	if err := inst.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sleepers(mark)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := sleepers(mark); len(left) > 0 {
		t.Errorf("processes %v of the jail outlived Destroy", left)
		for _, pid := range left {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// sleepers lists the host pids of live processes whose command line is
// /bin/sleep mark.
func sleepers(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(b, []byte("/bin/sleep\x00"+mark+"\x00")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}
