package e2b

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// maxInput is the most stdin one SendInput call carries.
const maxInput = 64 << 10

// A Command is one process to open.
type Command struct {
	// Argv is the command and its arguments. Required.
	Argv []string
	// Env is added to the sandbox's environment ("K=V").
	Env []string
	// Dir is the working directory; empty means the user's home.
	Dir string
}

// OpenProcess starts cmd with envd's process.Process/Start (stdin
// enabled) and returns once envd has reported its pid. While the process
// has not been reaped a second OpenProcess is refused with acp/wire's
// process_already_open; after Destroy with [adapters.CodeInstanceDestroyed].
func (s *Sandbox) OpenProcess(ctx context.Context, cmd Command) (*Process, error) {
	if err := vendorkit.CheckArgv("e2b", cmd.Argv); err != nil {
		return nil, err
	}
	envs, err := vendorkit.EnvMap("e2b", cmd.Env)
	if err != nil {
		return nil, err
	}
	p, err := s.slot.Open("e2b", s.id, func() *Process { return &Process{s: s, exit: vendorkit.NewExit()} })
	if err != nil {
		return nil, err
	}
	if err := p.start(ctx, cmd, envs); err != nil {
		s.slot.Release(p)
		return nil, err
	}
	return p, nil
}

// A Process is one live process in a sandbox, with the semantics of an
// OS process and its three pipes: stdout and stderr are separate (envd
// reports each data event as one or the other), stdin is envd's
// SendInput and CloseStdin, Kill is SendSignal SIGKILL, and the exit
// status is envd's end event (the code, or 128+signal). Read Stdout and
// Stderr both until EOF, as with OS pipes, and call Wait to reap it.
type Process struct {
	s   *Sandbox
	pid uint32

	cancel  context.CancelFunc
	stdoutR *io.PipeReader
	stderrR *io.PipeReader

	inMu     sync.Mutex // serialises SendInput and CloseStdin, in order
	inClosed bool

	exit *vendorkit.Exit // Wait's answer, once reaped
}

// processEvent is ProcessEvent in process.proto, as protojson writes it.
type processEvent struct {
	Start *struct {
		Pid uint32 `json:"pid"`
	} `json:"start"`
	Data *struct {
		Stdout []byte `json:"stdout"`
		Stderr []byte `json:"stderr"`
		Pty    []byte `json:"pty"`
	} `json:"data"`
	End *struct {
		ExitCode int32   `json:"exitCode"`
		Exited   bool    `json:"exited"`
		Status   string  `json:"status"`
		Error    *string `json:"error"`
	} `json:"end"`
	Keepalive *struct{} `json:"keepalive"`
}

type startResponse struct {
	Event processEvent `json:"event"`
}

// endStream is the Connect end-of-stream message.
type endStream struct {
	Error    *connectError       `json:"error"`
	Metadata map[string][]string `json:"metadata"`
}

type connectError struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details []json.RawMessage `json:"details"`
}

var eventOpts = strictjson.Options{MaxDepth: 8, MaxBytes: maxMessage}

func (p *Process) start(ctx context.Context, cmd Command, envs map[string]string) error {
	s := p.s
	msg, err := json.Marshal(map[string]any{
		"process": map[string]any{"cmd": cmd.Argv[0], "args": append([]string{}, cmd.Argv[1:]...), "envs": envs, "cwd": optional(cmd.Dir)},
		"stdin":   true,
	})
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot encode the command")
	}
	// The stream outlives ctx (which bounds only the start); Kill,
	// Destroy and the process's end cancel it.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	req, err := http.NewRequestWithContext(sctx, http.MethodPost, s.envd+"/process.Process/Start", bytes.NewReader(envelope(0, msg)))
	if err != nil {
		cancel()
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot build the Start request")
	}
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Protocol-Version", "1")
	s.authorize(req)
	type started struct {
		body io.ReadCloser
		pid  uint32
		err  error
	}
	ch := make(chan started, 1)
	go func() {
		resp, err := s.c.cfg.Data.Do(req)
		if err != nil {
			ch <- started{err: &checkfu.Refusal{Code: CodeEnvdRefused, Message: "e2b: envd did not answer Start", Err: err}}
			return
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/connect+json" {
			resp.Body.Close()
			ch <- started{err: checkfu.Refuse(CodeEnvdRefused, "e2b: envd answered Start with %d %s", resp.StatusCode, checkfu.Quote(resp.Header.Get("Content-Type")))}
			return
		}
		ev, err := nextEvent(resp.Body)
		if err == nil && ev.Start == nil {
			err = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd's first event is not start")
		}
		if err != nil {
			resp.Body.Close()
			ch <- started{err: err}
			return
		}
		ch <- started{body: resp.Body, pid: ev.Start.Pid}
	}()
	var st started
	select {
	case st = <-ch:
	case <-ctx.Done():
		cancel()
		st = <-ch
		if st.err == nil {
			st.body.Close()
			st.err = context.Cause(ctx)
		}
	}
	if st.err != nil {
		cancel()
		return st.err
	}
	p.pid = st.pid
	var outW, errW *io.PipeWriter
	p.stdoutR, outW = io.Pipe()
	p.stderrR, errW = io.Pipe()
	go p.read(st.body, outW, errW)
	return nil
}

func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nextEvent reads one StartResponse; io.EOF at the end-of-stream
// message when it carries no error.
func nextEvent(r io.Reader) (processEvent, error) {
	flags, msg, err := readEnvelope(r)
	if err == io.EOF {
		return processEvent{}, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd's stream ended without an end-of-stream message")
	}
	if err != nil {
		return processEvent{}, err
	}
	if flags&flagEndStream != 0 {
		var end endStream
		if err := strictjson.Unmarshal(msg, &end, eventOpts); err != nil {
			return processEvent{}, &checkfu.Refusal{Code: CodeEnvdStreamInvalid, Message: "e2b: envd's end-of-stream message is outside its shape", Err: err}
		}
		if end.Error != nil {
			return processEvent{}, checkfu.Refuse(CodeEnvdRefused, "e2b: envd ended the stream with %s: %s", checkfu.Quote(end.Error.Code), checkfu.Quote(end.Error.Message))
		}
		return processEvent{}, io.EOF
	}
	var resp startResponse
	if err := strictjson.Unmarshal(msg, &resp, eventOpts); err != nil {
		return processEvent{}, &checkfu.Refusal{Code: CodeEnvdStreamInvalid, Message: "e2b: an envd event is outside its shape", Err: err}
	}
	n := 0
	for _, set := range []bool{resp.Event.Start != nil, resp.Event.Data != nil, resp.Event.End != nil, resp.Event.Keepalive != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return processEvent{}, checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: an envd event sets %d of start, data, end and keepalive (want one)", n)
	}
	return resp.Event, nil
}

// read demultiplexes the stream into the two pipes until the end event
// and the end-of-stream message, then reaps the process.
func (p *Process) read(body io.ReadCloser, outW, errW *io.PipeWriter) {
	status, err := -1, error(nil)
	for {
		ev, e := nextEvent(body)
		if e != nil {
			if e == io.EOF {
				e = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd's stream ended before the process's end event")
			}
			err = e
			break
		}
		if ev.Start != nil {
			err = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd sent a second start event")
			break
		}
		if d := ev.Data; d != nil {
			if d.Pty != nil {
				err = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd sent pty data for a process without a pty")
				break
			}
			// A reader that went away makes Write fail at once; the
			// stream is drained regardless, as a closed pipe would be.
			// (An empty Write on an io.Pipe waits for a reader, so none
			// is made.)
			if len(d.Stdout) > 0 {
				_, _ = outW.Write(d.Stdout)
			}
			if len(d.Stderr) > 0 {
				_, _ = errW.Write(d.Stderr)
			}
			continue
		}
		if end := ev.End; end != nil {
			status = exitStatus(end.Exited, int(end.ExitCode), end.Status)
			if status < 0 || status > 255 {
				// envd runs in the sandbox: a status outside the
				// contract's (a code, or 128+signal) is not passed on.
				err = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd reported exit status %d, outside 0-255", status)
				break
			}
			if _, e := nextEvent(body); e != io.EOF {
				if e == nil {
					e = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: envd sent an event after the end event")
				}
				err = e
			}
			break
		}
	}
	body.Close()
	p.cancel()
	if status < 0 && err == nil {
		err = checkfu.Refuse(CodeEnvdStreamInvalid, "e2b: no exit status")
	}
	outW.CloseWithError(err)
	errW.CloseWithError(err)
	p.inMu.Lock()
	p.inClosed = true
	p.inMu.Unlock()
	p.s.slot.Reap(p, p.exit, status, err)
}

// exitStatus returns the code, or 128+signal for a process a signal
// ended (envd reports Go's ProcessState: exited false, status
// "signal: killed").
func exitStatus(exited bool, code int, status string) int {
	if exited {
		return code
	}
	name, ok := strings.CutPrefix(status, "signal: ")
	if ok {
		name = strings.TrimSuffix(name, " (core dumped)")
		for sig := 1; sig < 65; sig++ {
			if syscall.Signal(sig).String() == name {
				return 128 + sig
			}
		}
	}
	if code >= 0 {
		return code
	}
	return 128 + int(syscall.SIGKILL)
}

// authorize sets envd's own headers: the sandbox's access token and the
// user (HTTP basic, no password, as envd expects).
func (s *Sandbox) authorize(req *http.Request) {
	if t := s.token(); t != "" {
		req.Header.Set("X-Access-Token", t)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(s.c.cfg.User+":")))
}

// errGone marks envd's not_found for a process selector: the process
// has exited and envd has forgotten it.
var errGone = errors.New("e2b: the process has exited")

// unary calls one unary envd method with the Connect JSON protocol. A
// not_found answer wraps errGone.
func (p *Process) unary(method string, in any) error {
	s := p.s
	b, err := json.Marshal(in)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot encode %s", method)
	}
	// envd may be the workload's own: the answer, body included, is
	// waited for at most vendorkit.ControlTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.envd+"/process.Process/"+method, bytes.NewReader(b))
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot build %s", method)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	s.authorize(req)
	resp, err := s.c.cfg.Data.Do(req)
	if err != nil {
		return &checkfu.Refusal{Code: CodeEnvdRefused, Message: "e2b: envd did not answer " + method, Err: err}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		var ce connectError
		if strictjson.Unmarshal(data, &ce, eventOpts) == nil {
			if ce.Code == "not_found" {
				return &checkfu.Refusal{Code: CodeEnvdRefused, Message: "e2b: envd no longer knows the process (" + method + ")", Err: errGone}
			}
			return checkfu.Refuse(CodeEnvdRefused, "e2b: envd refused %s with %d %s: %s", method, resp.StatusCode, checkfu.Quote(ce.Code), checkfu.Quote(ce.Message))
		}
		return checkfu.Refuse(CodeEnvdRefused, "e2b: envd refused %s with %d", method, resp.StatusCode)
	}
	var empty struct{}
	if err := strictjson.Unmarshal(data, &empty, eventOpts); err != nil {
		return &checkfu.Refusal{Code: CodeEnvdRefused, Message: "e2b: envd's answer to " + method + " is outside its shape", Err: err}
	}
	return nil
}

func (p *Process) selector() map[string]any { return map[string]any{"pid": p.pid} }

// Stdin returns the process's standard input: each Write is one or more
// SendInput calls, in order; Close is CloseStdin.
func (p *Process) Stdin() io.WriteCloser { return stdin{p} }

type stdin struct{ p *Process }

func (w stdin) Write(b []byte) (int, error) {
	p := w.p
	p.inMu.Lock()
	defer p.inMu.Unlock()
	n := 0
	for len(b) > 0 {
		if p.inClosed {
			return n, io.ErrClosedPipe
		}
		c := b[:min(len(b), maxInput)]
		if err := p.unary("SendInput", map[string]any{"process": p.selector(), "input": map[string]any{"stdin": c}}); err != nil {
			if errors.Is(err, errGone) {
				return n, io.ErrClosedPipe // as writing to a dead process's pipe
			}
			return n, err
		}
		n += len(c)
		b = b[len(c):]
	}
	return n, nil
}

func (w stdin) Close() error {
	p := w.p
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inClosed {
		return nil
	}
	p.inClosed = true
	err := p.unary("CloseStdin", map[string]any{"process": p.selector()})
	if errors.Is(err, errGone) {
		return nil // a process that has exited has no stdin left to close
	}
	return err
}

// Stdout returns the process's standard output; it ends with io.EOF.
func (p *Process) Stdout() io.Reader { return p.stdoutR }

// Stderr returns the process's standard error; it ends with io.EOF.
func (p *Process) Stderr() io.Reader { return p.stderrR }

// Wait waits for the end event and returns the exit status.
func (p *Process) Wait() (int, error) {
	return p.exit.Wait()
}

// Kill sends SIGKILL (SendSignal). It is idempotent and does not wait.
// envd signals the process itself, not its process group: children it
// started survive until the sandbox is destroyed.
func (p *Process) Kill() error {
	if p.exit.Ended() {
		return nil
	}
	err := p.unary("SendSignal", map[string]any{"process": p.selector(), "signal": "SIGNAL_SIGKILL"})
	if errors.Is(err, errGone) {
		return nil // it ended meanwhile
	}
	return err
}

// Evidence returns what the adapter reports about the process's sandbox.
func (p *Process) Evidence() Evidence {
	e := p.s.evidence
	e.Caveats = append([]string(nil), e.Caveats...)
	return e
}
