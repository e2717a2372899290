package jail

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
)

// probeTimeout bounds the trial start of [Probe].
const probeTimeout = 5 * time.Second

// Probe finds what the kernel offers a jail: it starts the init stage
// once in every namespace a jail uses (the program's own binary, so the
// program must call [InitMain]), asks the kernel for its Landlock ABI
// and seccomp, and tries to make a group in each cgroup v1 hierarchy a
// jail's limits need.
func Probe() Support {
	s, _ := (&Provider{}).probe()
	return s
}

// probe is [Probe] with p's init stage. Its error is the trial start's
// when the stage started and then did not answer with
// [initstage.Protocol]: a stage that is not this package's.
func (p *Provider) probe() (Support, error) {
	s := Support{Landlock: initstage.LandlockABI(), Seccomp: initstage.SeccompAvailable(), Cgroups: cgroupsWritable()}
	started, err := p.trialStart()
	switch {
	case err == nil:
		s.Namespaces = true
	case started:
		s.NamespacesErr = err.Error()
		return s, err
	default:
		s.NamespacesErr = err.Error()
	}
	return s, nil
}

// trialStart starts the init stage in check mode and waits for its
// answer; started reports whether the clone into the namespaces and the
// exec worked, so that a failure after it is the stage's, not the
// kernel's.
func (p *Provider) trialStart() (started bool, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	child := os.NewFile(uintptr(fds[1]), "jail-sync-child")
	defer child.Close()
	unix.SetNonblock(fds[0], true)
	pf := os.NewFile(uintptr(fds[0]), "jail-sync")
	fc, err := net.FileConn(pf)
	pf.Close()
	if err != nil {
		return false, err
	}
	defer fc.Close()
	c := fc.(*net.UnixConn)
	cmd := initCommand()
	cmd.ExtraFiles = []*os.File{child}
	p.attachInit(cmd)
	if err := cmd.Start(); err != nil {
		return false, err
	}
	child.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c.SetDeadline(time.Now().Add(probeTimeout))
	b := initstage.Config{Check: true}.Encode()
	if _, err := c.Write(b); err != nil {
		return true, err
	}
	msg, _, err := readSync(c)
	switch {
	case err != nil && p.init == nil:
		return true, errors.New("the init stage did not answer (does the program call jail.InitMain first?)")
	case err != nil:
		return true, errors.New("the init program did not answer its trial start")
	case string(msg) != string(rune(initstage.MsgReady))+initstage.Protocol:
		return true, fmt.Errorf("the init stage answered %s, not %s", checkfu.Quote(string(msg)), initstage.Protocol)
	}
	return true, nil
}
