package jail

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// probeTimeout bounds the trial start of [Probe].
const probeTimeout = 5 * time.Second

// Probe finds what the kernel offers a jail: it starts the init stage
// once in every namespace a jail uses (so the program must call
// [InitMain]), asks the kernel for its Landlock ABI and seccomp, and
// tries to make a group in each cgroup v1 hierarchy a jail's limits
// need.
func Probe() Support {
	s := Support{Landlock: landlockABI(), Seccomp: auditArch != 0 && seccompAvailable(), Cgroups: cgroupsWritable()}
	if err := trialStart(); err != nil {
		s.NamespacesErr = err.Error()
	} else {
		s.Namespaces = true
	}
	return s
}

// trialStart starts the init stage in check mode and waits for its
// answer.
func trialStart() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	child := os.NewFile(uintptr(fds[1]), "jail-sync-child")
	defer child.Close()
	unix.SetNonblock(fds[0], true)
	pf := os.NewFile(uintptr(fds[0]), "jail-sync")
	fc, err := net.FileConn(pf)
	pf.Close()
	if err != nil {
		return err
	}
	defer fc.Close()
	c := fc.(*net.UnixConn)
	cmd := initCommand()
	cmd.ExtraFiles = []*os.File{child}
	if err := cmd.Start(); err != nil {
		return err
	}
	child.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c.SetDeadline(time.Now().Add(probeTimeout))
	b, _ := json.Marshal(initConfig{Check: true})
	if _, err := c.Write(b); err != nil {
		return err
	}
	msg, _, err := readSync(c)
	if err != nil {
		return errors.New("the init stage did not answer (does the program call jail.InitMain first?)")
	}
	if len(msg) != 1 || msg[0] != msgReady {
		return errors.New("the init stage answered wrong")
	}
	return nil
}
