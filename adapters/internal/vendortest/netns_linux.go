package vendortest

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsEnv marks a re-execution of the test binary inside a fresh
// network namespace: it brings loopback up and execs the command.
const netnsEnv = "CHECKFU_FAKE_NETNS_EXEC"

// Isolate makes cmd start in a fresh network namespace (only loopback,
// brought up, as a vendor's no-network sandbox has) when none is set, so
// that "no network" is a real process's behaviour, not the fake's word.
// The test binary re-executes itself in the namespace (NetnsMain) and
// execs the command from there. The tests run as root here; without the
// privilege the process fails to start and the test says so.
func Isolate(cmd *exec.Cmd, none bool) {
	if !none {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	cmd.Args = append([]string{self}, cmd.Args...)
	cmd.Path = self
	cmd.Env = append(cmd.Env, netnsEnv+"=1")
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
}

// IsolationReal says whether Isolate makes a real network namespace.
const IsolationReal = true

// NetnsMain, called first from TestMain, is the re-executed side.
func NetnsMain() {
	if os.Getenv(netnsEnv) != "1" {
		return
	}
	os.Unsetenv(netnsEnv)
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0); err == nil {
		if ifr, err := unix.NewIfreq("lo"); err == nil && unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr) == nil {
			ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
			_ = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
		}
		unix.Close(fd)
	}
	path, err := exec.LookPath(os.Args[1])
	if err == nil {
		err = syscall.Exec(path, os.Args[1:], os.Environ())
	}
	os.Stderr.WriteString("netns exec: " + err.Error() + "\n")
	os.Exit(127)
}
