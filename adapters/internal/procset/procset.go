package procset

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
)

// A Set is one instance's processes: at most one live, every one kept
// for Destroy to close its pipes. The zero Set is ready to use.
type Set struct {
	slot adapters.Slot

	mu    sync.Mutex // guards live and procs
	live  *Process
	procs []*Process
}

// Open checks spec's argv (refused with checkfu.CodeConfigInvalid, the
// message prefixed with who) and ctx, reserves the set's slot and calls
// start. A failed start releases the reservation; a started process is
// the set's live one until reaped.
func (s *Set) Open(ctx context.Context, who string, spec adapters.ProcessSpec, start func() (*Process, error)) (*Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "%s: a process needs an argv", who)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.slot.Acquire(); err != nil {
		return nil, err
	}
	p, err := start()
	if err != nil {
		s.slot.Release()
		return nil, err
	}
	s.mu.Lock()
	s.live = p
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return p, nil
}

// Destroy stops the set, once: it kills the live process, waits until it
// is reaped (or ctx ends, whose error it returns) and, either way, closes
// the pipes of every process the set opened. first is false when the set was
// already destroyed; then Destroy does nothing.
func (s *Set) Destroy(ctx context.Context) (first bool, err error) {
	if !s.slot.Destroy() {
		return false, nil
	}
	s.mu.Lock()
	p, procs := s.live, s.procs
	s.procs = nil
	s.mu.Unlock()
	if p != nil {
		p.Kill()
		select {
		case <-p.reaped:
		case <-ctx.Done():
			// The process was killed and is reaped on its own; its
			// pipes are closed all the same, as nothing else will.
			err = ctx.Err()
		}
	}
	for _, p := range procs {
		p.closePipes()
	}
	return true, err
}

// Pipes are a child's stdin, stdout and stderr: the child's ends, for
// exec.Cmd, and the parent's.
type Pipes struct {
	childIn, childOut, childErr *os.File
	in, out, err                *os.File
}

// NewPipes makes the three pipes, or none.
func NewPipes() (*Pipes, error) {
	var fs [6]*os.File
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range fs[:i] {
				f.Close()
			}
			return nil, err
		}
		fs[i], fs[i+1] = r, w
	}
	return &Pipes{childIn: fs[0], in: fs[1], out: fs[2], childOut: fs[3], err: fs[4], childErr: fs[5]}, nil
}

// Attach gives cmd the child's ends.
func (p *Pipes) Attach(cmd *exec.Cmd) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.childIn, p.childOut, p.childErr
}

// CloseChild closes the child's ends, once the child holds them (or
// will never start).
func (p *Pipes) CloseChild() {
	p.childIn.Close()
	p.childOut.Close()
	p.childErr.Close()
}

// Close closes every end: a child that did not start.
func (p *Pipes) Close() {
	p.CloseChild()
	p.in.Close()
	p.out.Close()
	p.err.Close()
}

// A Process is a started child of the Runner, watched by its Set.
type Process struct {
	cmd            *exec.Cmd
	stdin          *os.File
	stdout, stderr *eofCloser
	ev             adapters.Evidence
	kill           func(*exec.Cmd) error

	mu     sync.Mutex // guards exited (so Kill never signals a reaped pid)
	exited bool
	reaped chan struct{} // closed once reaped; then status and err are set
	status int
	err    error
}

var _ adapters.Process = (*Process)(nil)

// Watch makes the adapters.Process of cmd, started with pipes (whose
// child ends the caller has closed), whose evidence is ev and whose
// Kill is kill(cmd). A goroutine reaps it: it sets the status, runs
// onExit (nil for none), and then releases the set's reservation.
func (s *Set) Watch(cmd *exec.Cmd, pipes *Pipes, ev adapters.Evidence, kill func(*exec.Cmd) error, onExit func()) *Process {
	p := &Process{cmd: cmd, stdin: pipes.in, stdout: &eofCloser{f: pipes.out}, stderr: &eofCloser{f: pipes.err},
		ev: ev, kill: kill, reaped: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exited = true
		p.mu.Unlock()
		p.status, p.err = status(cmd, err)
		if onExit != nil {
			onExit()
		}
		s.mu.Lock()
		if s.live == p {
			s.live = nil
		}
		s.mu.Unlock()
		s.slot.Release()
		close(p.reaped)
	}()
	return p
}

func (p *Process) Stdin() io.WriteCloser       { return p.stdin }
func (p *Process) Stdout() io.Reader           { return p.stdout }
func (p *Process) Stderr() io.Reader           { return p.stderr }
func (p *Process) Evidence() adapters.Evidence { return p.ev }

// Wait waits for the process to be reaped and returns its exit status:
// the exit code, or 128+signal.
func (p *Process) Wait() (int, error) {
	<-p.reaped
	return p.status, p.err
}

// Kill runs the provider's kill, unless the process is reaped.
func (p *Process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	return p.kill(p.cmd)
}

func (p *Process) closePipes() {
	p.stdin.Close()
	p.stdout.f.Close()
	p.stderr.f.Close()
}

// An eofCloser reads a pipe and closes it at EOF, so a process whose
// output was read to the end holds no descriptor. It is read by one
// goroutine at a time, like any pipe.
type eofCloser struct {
	f   *os.File
	eof bool
}

func (e *eofCloser) Read(b []byte) (int, error) {
	if e.eof {
		return 0, io.EOF
	}
	n, err := e.f.Read(b)
	if err == io.EOF {
		e.eof = true
		e.f.Close()
	}
	return n, err
}

// status turns cmd.Wait's result into an exit status: the exit code, or
// 128+signal.
func status(cmd *exec.Cmd, err error) (int, error) {
	if cmd.ProcessState == nil {
		return -1, err
	}
	if s, ok := signaled(cmd.ProcessState); ok {
		return 128 + s, nil
	}
	return cmd.ProcessState.ExitCode(), nil
}
