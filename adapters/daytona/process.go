package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// The daemon's stream prefixes in the command log.
var (
	stdoutPrefix = []byte{1, 1, 1}
	stderrPrefix = []byte{2, 2, 2}
)

// maxLine bounds the stdin the adapter holds while waiting for a newline.
const maxLine = 1 << 20

// A Command is one process to open.
type Command struct {
	// Argv is the command and its arguments. Required.
	Argv []string
	// Env is added for this command ("K=V", K a shell name).
	Env []string
	// Dir is the working directory; empty means the session's.
	Dir string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// commandLine is the session command for cmd: a subshell, so that a cd
// or an exit stays inside it, with the assignments applying to argv
// only.
func commandLine(cmd Command) (string, error) {
	if err := vendorkit.CheckArgv("daytona", cmd.Argv); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("(")
	if cmd.Dir != "" {
		b.WriteString("cd " + shellQuote(cmd.Dir) + " && ")
	}
	for _, kv := range cmd.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: env entry %s is not NAME=value", checkfu.Quote(k))
		}
		b.WriteString(k + "=" + shellQuote(v) + " ")
	}
	for i, a := range cmd.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	b.WriteString(")")
	return b.String(), nil
}

// OpenProcess runs cmd in a fresh toolbox session: it creates the
// session, executes the command asynchronously with input echo
// suppressed, and opens the command's log WebSocket (follow=true), whose
// prefixes keep stdout and stderr apart. While the process has not been
// reaped a second OpenProcess is refused with acp/wire's
// process_already_open; after Destroy with [adapters.CodeInstanceDestroyed].
func (s *Sandbox) OpenProcess(ctx context.Context, cmd Command) (*Process, error) {
	line, err := commandLine(cmd)
	if err != nil {
		return nil, err
	}
	p, err := s.slot.Open("daytona", s.id, func() *Process {
		s.seq++
		return &Process{s: s, session: "checkfu-" + strconv.Itoa(s.seq), exit: vendorkit.NewExit()}
	})
	if err != nil {
		return nil, err
	}
	if err := p.start(ctx, line); err != nil {
		p.deleteSession()
		s.slot.Release(p)
		return nil, err
	}
	return p, nil
}

// A Process is one command in its own toolbox session. stdout and
// stderr are separate but line-framed by the daemon, and stdin takes
// UTF-8 lines and cannot be closed ([StdioCaveats]). Read Stdout and
// Stderr both until EOF and call Wait to reap it.
type Process struct {
	s       *Sandbox
	session string
	cmdID   string
	ws      *wsConn

	stdoutR *io.PipeReader
	stderrR *io.PipeReader

	inMu  sync.Mutex // guards inBuf and serialises input calls
	inBuf []byte

	killMu sync.Mutex // guards killed
	killed bool

	exit *vendorkit.Exit // Wait's answer, once reaped
}

func (p *Process) toolbox(path string) string { return p.s.toolbox + path }

func (p *Process) call(ctx context.Context, method, path string, in any, want ...int) (map[string]any, error) {
	c := p.s.c
	return call(ctx, c.cfg.Edge, c.cfg.Credential, method, p.toolbox(path), in, CodeToolboxRefused, want...)
}

// control is call for a request that controls the live process (its
// input, exit code, or session's end): the toolbox's daemon runs in the
// sandbox, where the workload may answer for it, so the answer is
// waited for at most vendorkit.ControlTimeout.
func (p *Process) control(method, path string, in any, want ...int) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)
	defer cancel()
	return p.call(ctx, method, path, in, want...)
}

func (p *Process) start(ctx context.Context, line string) error {
	sess := "/process/session/" + url.PathEscape(p.session)
	if _, err := p.call(ctx, http.MethodPost, "/process/session", map[string]any{"sessionId": p.session}, http.StatusCreated, http.StatusOK); err != nil {
		return err
	}
	r, err := p.call(ctx, http.MethodPost, sess+"/exec", map[string]any{"command": line, "runAsync": true, "suppressInputEcho": true}, http.StatusOK, http.StatusAccepted)
	if err != nil {
		return err
	}
	p.cmdID, _ = r["cmdId"].(string)
	if !vendorkit.PathSafeID(p.cmdID, "") {
		return checkfu.Refuse(CodeToolboxRefused, "daytona: exec answered command id %s", checkfu.Quote(p.cmdID))
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, p.toolbox(sess+"/command/"+url.PathEscape(p.cmdID)+"/logs?follow=true"), nil)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: cannot build the log request")
	}
	key := wsUpgrade(req)
	sdkHeaders(req)
	c := p.s.c
	resp, err := c.cfg.Edge.Send(req, c.cfg.Credential, "Authorization", "Bearer ")
	if err != nil {
		return &checkfu.Refusal{Code: CodeToolboxRefused, Message: "daytona: the log stream was not answered", Err: err}
	}
	if p.ws, err = wsOpen(resp, key); err != nil {
		return err
	}
	var outW, errW *io.PipeWriter
	p.stdoutR, outW = io.Pipe()
	p.stderrR, errW = io.Pipe()
	go p.read(outW, errW)
	return nil
}

// A demux splits the daemon's command log into stdout and stderr by its
// prefixes, across message boundaries: a prefix cut by a boundary is
// held until the next message.
type demux struct {
	out, err io.Writer
	cur      io.Writer
	carry    []byte
}

func (d *demux) write(w io.Writer, b []byte) {
	if len(b) > 0 {
		_, _ = w.Write(b) // a reader that went away fails at once
	}
}

// feed takes one message of the log.
func (d *demux) feed(msg []byte) {
	if d.cur == nil {
		d.cur = d.out
	}
	data := append(d.carry, msg...)
	d.carry = nil
	for len(data) > 0 {
		i := bytes.IndexByte(data, 1)
		if j := bytes.IndexByte(data, 2); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			d.write(d.cur, data)
			return
		}
		d.write(d.cur, data[:i])
		data = data[i:]
		if len(data) < 3 && (bytes.HasPrefix(stdoutPrefix, data) || bytes.HasPrefix(stderrPrefix, data)) {
			d.carry = append([]byte(nil), data...) // perhaps a prefix cut by the message boundary
			return
		}
		switch {
		case bytes.HasPrefix(data, stdoutPrefix):
			d.cur, data = d.out, data[3:]
		case bytes.HasPrefix(data, stderrPrefix):
			d.cur, data = d.err, data[3:]
		default:
			d.write(d.cur, data[:1])
			data = data[1:]
		}
	}
}

// flush writes what is held at the end of the log.
func (d *demux) flush() {
	if d.cur == nil {
		d.cur = d.out
	}
	d.write(d.cur, d.carry)
	d.carry = nil
}

// read demultiplexes the log into the two pipes, then fetches the exit
// code and reaps the process.
func (p *Process) read(outW, errW *io.PipeWriter) {
	d := &demux{out: outW, err: errW}
	var err error
	for {
		msg, e := p.ws.next()
		if e == io.EOF {
			break
		}
		if e != nil {
			err = e
			break
		}
		d.feed(msg)
	}
	d.flush()
	p.ws.close()
	status := -1
	if err == nil {
		status, err = p.exitCode()
	}
	outW.CloseWithError(err)
	errW.CloseWithError(err)
	p.deleteSession()
	p.s.slot.Reap(p, p.exit, status, err)
}

// exitCode asks for the command's exit code, which the daemon records
// once the log is complete. A command whose session was deleted (Kill)
// has none: its status is 128+SIGKILL, the signal the adapter asked for.
func (p *Process) exitCode() (int, error) {
	path := "/process/session/" + url.PathEscape(p.session) + "/command/" + url.PathEscape(p.cmdID)
	for range 20 {
		if p.wasKilled() {
			return 137, nil
		}
		r, err := p.control(http.MethodGet, path, nil, http.StatusOK)
		if err != nil {
			if p.wasKilled() {
				return 137, nil
			}
			return -1, err
		}
		if n, ok := r["exitCode"].(json.Number); ok {
			code, err := strconv.Atoi(string(n))
			if err != nil || code < 0 || code > 255 {
				return -1, checkfu.Refuse(CodeToolboxRefused, "daytona: exit code %s", checkfu.Quote(string(n)))
			}
			return code, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return -1, checkfu.Refuse(CodeToolboxRefused, "daytona: the command's log ended but no exit code was recorded")
}

func (p *Process) wasKilled() bool {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	return p.killed
}

// deleteSession ends the session and every process in it.
func (p *Process) deleteSession() {
	_, _ = p.control(http.MethodDelete, "/process/session/"+url.PathEscape(p.session), nil, http.StatusNoContent, http.StatusOK, http.StatusNotFound)
}

// Stdin returns the process's standard input. Write sends each complete
// line, when its newline arrives, with SendInput; a line that is not
// UTF-8 is refused with [CodeStdinInexpressible], as is Close: a
// session's input cannot end (and a last line without a newline would
// gain one), so the Close error is the honest answer. Close after the
// process has exited returns nil.
func (p *Process) Stdin() io.WriteCloser { return stdin{p} }

type stdin struct{ p *Process }

func (w stdin) Write(b []byte) (int, error) {
	p := w.p
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.exit.Ended() {
		return 0, io.ErrClosedPipe
	}
	if len(p.inBuf)+len(b) > maxLine && !bytes.Contains(b, []byte{'\n'}) {
		return 0, checkfu.Refuse(CodeStdinInexpressible, "daytona: a stdin line over %d bytes", maxLine)
	}
	p.inBuf = append(p.inBuf, b...)
	for {
		i := bytes.IndexByte(p.inBuf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := p.inBuf[:i+1]
		if !utf8.Valid(line) {
			p.inBuf = nil
			return 0, checkfu.Refuse(CodeStdinInexpressible, "daytona: stdin that is not UTF-8 cannot cross a session's input")
		}
		path := "/process/session/" + url.PathEscape(p.session) + "/command/" + url.PathEscape(p.cmdID) + "/input"
		if _, err := p.control(http.MethodPost, path, map[string]any{"data": string(line)}, http.StatusNoContent, http.StatusOK); err != nil {
			return 0, err
		}
		p.inBuf = p.inBuf[i+1:]
	}
}

func (w stdin) Close() error {
	p := w.p
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.exit.Ended() {
		return nil
	}
	if len(p.inBuf) > 0 {
		return checkfu.Refuse(CodeStdinInexpressible, "daytona: %d bytes of stdin after the last newline cannot be sent exactly (the daemon adds a newline)", len(p.inBuf))
	}
	return checkfu.Refuse(CodeStdinInexpressible, "daytona: a session's stdin cannot be closed; the process never sees end of input")
}

// Stdout returns the process's standard output; it ends with io.EOF.
func (p *Process) Stdout() io.Reader { return p.stdoutR }

// Stderr returns the process's standard error; it ends with io.EOF.
func (p *Process) Stderr() io.Reader { return p.stderrR }

// Wait waits for the log to end and returns the exit status.
func (p *Process) Wait() (int, error) {
	return p.exit.Wait()
}

// Kill deletes the process's session, which terminates its whole
// process group. It is idempotent and does not wait.
func (p *Process) Kill() error {
	if p.exit.Ended() {
		return nil
	}
	p.killMu.Lock()
	p.killed = true
	p.killMu.Unlock()
	_, err := p.control(http.MethodDelete, "/process/session/"+url.PathEscape(p.session), nil, http.StatusNoContent, http.StatusOK, http.StatusNotFound)
	return err
}

// Evidence returns what the adapter reports about the process's sandbox.
func (p *Process) Evidence() Evidence {
	e := p.s.evidence
	e.Stdio = append([]string(nil), e.Stdio...)
	return e
}
