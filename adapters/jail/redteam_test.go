//go:build linux

package jail_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
)

// The red-team pass: what a hijacked workload inside a jail tries that
// the other escape tests do not, each against a real jail on this
// kernel.

// terminalMarker is what a jail writes to the Runner's terminal when it
// can open it.
const terminalMarker = "checkfu-jail-reached-the-terminal"

// unneededCall is a system call a workload never needs, with arguments
// the kernel itself would refuse with another errno than the filter's
// (a bad descriptor, a null pointer), so the answer tells the filter
// from the kernel.
type unneededCall struct {
	name string
	nr   uintptr
	args [6]uintptr
	want unix.Errno // the filter's answer
}

const badFD = ^uintptr(0) // -1 in the low 32 bits the kernel reads

var unneededCalls = []unneededCall{
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{0, 0}, unix.EPERM},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uintptr{badFD}, unix.EPERM},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uintptr{badFD}, unix.EPERM},
	{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{1}, unix.EPERM}, // UFFD_USER_MODE_ONLY: the kernel would allow it
	{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, [6]uintptr{badFD}, unix.EPERM},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, [6]uintptr{badFD}, unix.EPERM},
	{"kcmp", unix.SYS_KCMP, [6]uintptr{0, 0, 99}, unix.EPERM},
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{badFD}, unix.EPERM},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uintptr{badFD}, unix.EPERM},
	{"pidfd_getfd", unix.SYS_PIDFD_GETFD, [6]uintptr{badFD}, unix.EPERM},
	{"setns", unix.SYS_SETNS, [6]uintptr{badFD}, unix.EPERM},
	{"open_tree", unix.SYS_OPEN_TREE, [6]uintptr{badFD}, unix.EPERM},
	{"open_tree_attr", unix.SYS_OPEN_TREE_ATTR, [6]uintptr{badFD}, unix.EPERM},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR, [6]uintptr{badFD}, unix.EPERM},
	{"move_mount", unix.SYS_MOVE_MOUNT, [6]uintptr{badFD}, unix.EPERM},
	{"fspick", unix.SYS_FSPICK, [6]uintptr{badFD}, unix.EPERM},
	{"quotactl", unix.SYS_QUOTACTL, [6]uintptr{badFD}, unix.EPERM},
	{"quotactl_fd", unix.SYS_QUOTACTL_FD, [6]uintptr{badFD}, unix.EPERM},
	{"bpf", unix.SYS_BPF, [6]uintptr{badFD}, unix.EPERM},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{0, 0, badFD, badFD}, unix.EPERM},
	{"keyctl", unix.SYS_KEYCTL, [6]uintptr{badFD}, unix.EPERM},
	{"fanotify_init", unix.SYS_FANOTIFY_INIT, [6]uintptr{badFD}, unix.EPERM},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD, [6]uintptr{badFD, badFD, 0, 0, badFD}, unix.EPERM},
	{"syslog", unix.SYS_SYSLOG, [6]uintptr{badFD}, unix.EPERM},
	{"clone3", unix.SYS_CLONE3, [6]uintptr{0, 0}, unix.ENOSYS},
	{"x32 getpid", 0x40000000 | unix.SYS_GETPID, [6]uintptr{}, unix.EPERM},
}

// tryRedTeam is tryEscape's second half: the red-team's tries.
func tryRedTeam(what string, args []string) (worked bool, msg string, ok bool) {
	switch what {
	case "terminal": // open the controlling terminal, write to it, push a byte into its input
		sid, _ := unix.Getsid(0)
		fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, fmt.Sprintf("open /dev/tty: %v (session %d)", err, sid), true
		}
		unix.Write(fd, []byte(terminalMarker+"\n"))
		c := byte('#')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		return true, fmt.Sprintf("opened the Runner's terminal (session %d) and wrote to it; TIOCSTI: %v", sid, errno), true
	case "syscalls": // each unneeded call; worked if any got past the filter
		var got []string
		for _, c := range unneededCalls {
			_, _, errno := unix.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
			if errno != c.want {
				got = append(got, fmt.Sprintf("%s: %v (errno %d), want %v", c.name, errno, int(errno), c.want))
			}
		}
		return len(got) > 0, strings.Join(got, "; "), true
	case "rawhttp": // send args[1] to the TCP address args[0] and print the status lines of the answers
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			return false, "dial: " + err.Error(), true
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, args[1]); err != nil {
			return false, "write: " + err.Error(), true
		}
		c.(*net.TCPConn).CloseWrite()
		var status []string
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "HTTP/1.") {
				status = append(status, l)
			}
		}
		return false, strings.Join(status, " | "), true
	case "listen-abstract": // listen on the abstract socket args[0], connect to it from here (the control), then hold it until stdin ends
		ln, err := net.Listen("unix", args[0])
		if err != nil {
			return false, "listen: " + err.Error(), true
		}
		defer ln.Close()
		c, err := net.Dial("unix", args[0])
		if err != nil {
			return false, "control: " + err.Error(), true
		}
		c.Close()
		fmt.Println("listening")
		io.Copy(io.Discard, os.Stdin)
		return true, "held", true
	case "links": // a hard link to a file outside the workspace, in the workspace or /tmp
		for _, src := range args {
			for _, dst := range []string{jail.WorkspacePath + "/link", "/tmp/link"} {
				if err := os.Link(src, dst); err == nil {
					return true, "linked " + src + " at " + dst, true
				}
			}
		}
		return false, "no link made", true
	}
	return false, "", false
}

// terminalRunnerArg makes the test binary act as a Runner whose
// controlling terminal is the one the test gave it: it starts one jail
// that tries the terminal and prints the jail's exit code and message.
const terminalRunnerArg = "checkfu-jail-terminal-runner"

func terminalRunnerMain() {
	if len(os.Args) < 2 || os.Args[1] != terminalRunnerArg {
		return
	}
	msg, err := runOnTerminal()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println(msg)
	os.Exit(0)
}

func runOnTerminal() (string, error) {
	// Control: this Runner has the terminal as its controlling one.
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("control: the Runner cannot open its own terminal: %v", err)
	}
	unix.Close(fd)
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	p, err := jail.New(jail.ConfigForTest(jail.Config{Binds: []jail.Bind{{Source: exe, Target: probePath}}}))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := p.Create(ctx, p.Spec("terminal", testDigest))
	if err != nil {
		return "", err
	}
	defer inst.Destroy(ctx)
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{probePath, escapeArg, "terminal"}})
	if err != nil {
		return "", err
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr())
	out, _ := io.ReadAll(proc.Stdout())
	code, _ := proc.Wait()
	return strconv.Itoa(code) + " " + strings.TrimSpace(string(out)), nil
}

// openPty returns the two ends of a new pseudo-terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pseudo-terminal: %v (CI must run the controlling-terminal escape)", err)
		}
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestEscapeControllingTerminal runs a Runner (the test binary) whose
// controlling terminal is a pseudo-terminal the test holds, as a
// developer's shell gives one to `checkfu` or the quickstart, and has
// its jail open /dev/tty: the jail must not reach the Runner's
// terminal, neither to read what the user types nor to write to it or
// push input into it (TIOCSTI).
func TestEscapeControllingTerminal(t *testing.T) {
	newProvider(t, jail.Config{}) // skips (or fails in CI) without the kernel's support
	master, slave := openPty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], terminalRunnerArg)
	cmd.Stdin = slave
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Runner on a terminal: %v: %s", err, out.Bytes())
	}
	code, msg, _ := strings.Cut(strings.TrimSpace(out.String()), " ")
	if code != "0" && code != "1" {
		t.Fatalf("the jail's try: %s", out.Bytes())
	}
	if code == "0" {
		t.Errorf("the jail reached the Runner's terminal: %s", msg)
	} else {
		t.Logf("the jail's try: %s", msg)
	}
	// Whatever the jail wrote is in the terminal's buffer by now: the
	// Runner reaped the jail before it exited.
	mfd := int(master.Fd()) // Fd makes the descriptor blocking: once
	if err := unix.SetNonblock(mfd, true); err != nil {
		t.Fatal(err)
	}
	var seen []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(mfd, buf)
		if n <= 0 || err != nil {
			break
		}
		seen = append(seen, buf[:n]...)
	}
	if bytes.Contains(seen, []byte(terminalMarker)) {
		t.Errorf("the jail wrote to the Runner's terminal: %q", seen)
	}
}

// TestEscapeSignalsOutsideTheJail has one jail signal every process it
// may name: kill(-1) and kill(0), its process group, which it shares
// with the Runner unless the jail starts a session of its own. Another
// jail of the same host identity (nobody, for a root Runner) and the
// Runner must both live on.
func TestEscapeSignalsOutsideTheJail(t *testing.T) {
	p := newProvider(t, jail.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target, err := jail.CreateForTest(t, p, p.Spec("signal-target", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := target.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo started; read x; echo alive"}})
	if err != nil {
		t.Fatal(err)
	}
	tout := bufio.NewReader(tp.Stdout())
	if line, err := tout.ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("control: the target did not start: %q, %v", line, err)
	}
	sender, err := jail.CreateForTest(t, p, p.Spec("signal-sender", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sender.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "kill -KILL -1; kill -KILL 0; echo sent"}})
	if err != nil {
		t.Fatal(err)
	}
	sp.Stdin().Close()
	go io.Copy(io.Discard, sp.Stderr())
	sent, _ := io.ReadAll(sp.Stdout())
	sp.Wait()
	if string(sent) != "sent\n" {
		t.Fatalf("control: the sender's signals were not all sent: %q", sent)
	}
	if _, err := io.WriteString(tp.Stdin(), "x\n"); err != nil {
		t.Errorf("the other jail died: %v", err)
	}
	if line, err := tout.ReadString('\n'); err != nil || line != "alive\n" {
		t.Errorf("the other jail died of the signals: %q, %v", line, err)
	}
	tp.Stdin().Close()
	tp.Wait()
}

// TestSeccompRefusesUnneededCalls makes each system call of
// unneededCalls in a jail, with arguments the kernel would refuse
// with another errno: each must get the filter's answer.
func TestSeccompRefusesUnneededCalls(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "syscalls"); ok {
		t.Errorf("calls past the filter: %s", msg)
	}
}

// TestSeccompKillsOtherArchitectures runs, in a jail, a static program
// that makes a 32-bit system call through int 0x80 (the i386 ABI, which
// this kernel emulates): ptrace(PTRACE_TRACEME), whose i386 number is
// the x86_64 number of msync, which the filter allows. The filter must
// kill the process on the architecture alone; on the host (the
// control) the call succeeds and the program exits 0.
func TestSeccompKillsOtherArchitectures(t *testing.T) {
	dir, err := os.MkdirTemp("", "checkfu-jail-i386-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	prog := filepath.Join(dir, "int80")
	if err := os.WriteFile(prog, int80Program(), 0o755); err != nil {
		t.Fatal(err)
	}
	ctl := exec.Command(prog)
	if err := ctl.Run(); err != nil {
		var ee *exec.ExitError
		if ws, ok := ctl.ProcessState.Sys().(syscall.WaitStatus); errors.As(err, &ee) && ok && ws.Signaled() && ws.Signal() == syscall.SIGSEGV {
			// This kernel refuses i386 calls itself (IA-32 emulation
			// off): a jailed one dies before the filter sees it, so
			// this test shows only that it dies. The filter's own
			// verdict on every i386 call is initstage's
			// TestFilterKillsOtherArchitectures.
			t.Logf("control: the host's kernel refuses the i386 call (%v)", err)
		} else if os.Getenv("CI") == "true" {
			t.Fatalf("control: the i386 call on the host: %v (CI must run the other-architecture check)", err)
		} else {
			t.Skipf("control: the i386 call on the host: %v (no i386 emulation?)", err)
		}
	}
	p := newProvider(t, jail.Config{Binds: []jail.Bind{{Source: dir, Target: jail.BindRoot + "/i386"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := jail.CreateForTest(t, p, p.Spec("i386", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{jail.BindRoot + "/i386/int80"}})
	if err != nil {
		t.Fatal(err)
	}
	proc.Stdin().Close()
	go io.Copy(io.Discard, proc.Stderr())
	io.Copy(io.Discard, proc.Stdout())
	code, err := proc.Wait()
	if code == 0 {
		t.Errorf("an i386 ptrace(PTRACE_TRACEME) went past the filter (exit %d, %v)", code, err)
	} else {
		t.Logf("the i386 call: exit %d, %v", code, err)
	}
}

// int80Program is a static x86_64 ELF program that calls i386
// ptrace(PTRACE_TRACEME) through int 0x80 and exits with its result:
// 0 when the call succeeded.
func int80Program() []byte {
	code := []byte{
		0xb8, 26, 0, 0, 0, // mov eax, 26 (i386 ptrace)
		0x31, 0xdb, // xor ebx, ebx (PTRACE_TRACEME)
		0xcd, 0x80, // int 0x80
		0x89, 0xc7, // mov edi, eax
		0xb8, 60, 0, 0, 0, // mov eax, 60 (exit)
		0x0f, 0x05, // syscall
	}
	const base, hdrs = 0x400000, 64 + 56
	b := make([]byte, hdrs, hdrs+len(code))
	le := binary.LittleEndian
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(b[16:], 2)  // ET_EXEC
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], base+hdrs) // entry
	le.PutUint64(b[32:], 64)        // program headers
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	ph := b[64:]
	le.PutUint32(ph[0:], 1) // PT_LOAD
	le.PutUint32(ph[4:], 5) // R+X
	le.PutUint64(ph[16:], base)
	le.PutUint64(ph[24:], base)
	le.PutUint64(ph[32:], uint64(hdrs+len(code)))
	le.PutUint64(ph[40:], uint64(hdrs+len(code)))
	le.PutUint64(ph[48:], 0x1000)
	return append(b, code...)
}

// TestEscapeHardLinks links a file of the system directories and a
// bound file into the workspace and /tmp, where a later reader might
// take them for the workload's own: each is another mount, so the
// kernel refuses (EXDEV).
func TestEscapeHardLinks(t *testing.T) {
	p := newProvider(t, jail.Config{})
	if ok, msg := escape(t, p, "links", "/etc/passwd", probePath); ok {
		t.Errorf("hard link: %s", msg)
	}
}

// TestAllowlistRelayCarriesNoSmuggling writes raw requests to the relay
// of an allowlist jail: a denied host behind an allowed one on the same
// connection, a CONNECT to a denied host, a Host header naming a denied
// host under an allowed URL, an origin-form request, and a request whose
// Content-Length and Transfer-Encoding disagree with a denied request
// behind it. The relay carries bytes; the guard decides each request,
// and the upstream never sees one naming the denied host (the same live
// listener as the allowed one, under another name).
func TestAllowlistRelayCarriesNoSmuggling(t *testing.T) {
	rig := newAllowlistRig(t)
	inst := rig.instance(t)
	a := "allowed.test:" + strconv.Itoa(int(rig.port))
	d := "denied.test:" + strconv.Itoa(int(rig.port))
	tries := []struct{ name, payload string }{
		{"pipelined", "GET http://" + a + "/ HTTP/1.1\r\nHost: " + a + "\r\n\r\nGET http://" + d + "/ HTTP/1.1\r\nHost: " + d + "\r\n\r\n"},
		{"connect", "CONNECT " + d + " HTTP/1.1\r\nHost: " + d + "\r\n\r\nGET / HTTP/1.1\r\nHost: " + d + "\r\n\r\n"},
		{"host header", "GET http://" + a + "/ HTTP/1.1\r\nHost: " + d + "\r\n\r\n"},
		{"origin form", "GET / HTTP/1.1\r\nHost: " + d + "\r\n\r\n"},
		{"CL.TE", "POST http://" + a + "/ HTTP/1.1\r\nHost: " + a + "\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET http://" + d + "/ HTTP/1.1\r\nHost: " + d + "\r\n\r\n"},
	}
	for _, try := range tries {
		_, msg := runIn(t, inst, []string{probePath, escapeArg, "rawhttp", "127.0.0.1:" + strconv.Itoa(jail.RelayPort), try.payload})
		t.Logf("%s: %s", try.name, msg)
		if !strings.HasPrefix(msg, "HTTP/1.") {
			t.Errorf("control: %s: the relay did not answer: %q", try.name, msg)
		}
	}
	if n := rig.deniedHits.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests naming the denied host", n)
	}
	if rig.hits.Load() == 0 {
		t.Errorf("control: the allowed request of the pipelined try did not reach the upstream")
	}
}

// TestEscapeAbstractSocketOfAnotherJail has one jail listen on an
// abstract Unix socket (connecting to it from inside, the control) and
// another jail of the same host identity connect to it: each jail has
// its own network namespace, whose abstract names are its own, and
// Landlock's abstract-socket scope refuses a peer outside the domain.
func TestEscapeAbstractSocketOfAnotherJail(t *testing.T) {
	p := newProvider(t, jail.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := "@checkfu-jail-abstract-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	holder, err := jail.CreateForTest(t, p, p.Spec("abstract-holder", testDigest), "")
	if err != nil {
		t.Fatal(err)
	}
	hp, err := holder.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{probePath, escapeArg, "listen-abstract", name}})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, hp.Stderr())
	if line, err := bufio.NewReader(hp.Stdout()).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("control: the holder: %q, %v", line, err)
	}
	if ok, msg := escape(t, p, "unix", name); ok {
		t.Errorf("another jail's abstract socket: %s", msg)
	}
	hp.Stdin().Close()
	hp.Wait()
}
