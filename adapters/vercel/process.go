package vercel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// maxLine bounds one NDJSON line of a command stream.
const maxLine = 1 << 20

// A Command is one process to open.
type Command struct {
	// Argv is the command and its arguments. Required.
	Argv []string
	// Env is added for this command ("K=V").
	Env []string
	// Dir is the working directory; empty means the sandbox's.
	Dir string
}

// OpenProcess runs cmd with POST /v2/sandboxes/sessions/{id}/cmd and
// wait=true, whose answer is an NDJSON stream: the command, its output
// lines, then the command again with its exit code. It returns once the
// command's ID has arrived. While the process has not been reaped a
// second OpenProcess is refused with acp/wire's process_already_open;
// after Destroy with [adapters.CodeInstanceDestroyed].
func (s *Sandbox) OpenProcess(ctx context.Context, cmd Command) (*Process, error) {
	if err := vendorkit.CheckArgv("vercel", cmd.Argv); err != nil {
		return nil, err
	}
	env, err := vendorkit.EnvMap("vercel", cmd.Env)
	if err != nil {
		return nil, err
	}
	p, err := s.slot.Open("vercel", s.id, func() *Process { return &Process{s: s, exit: vendorkit.NewExit()} })
	if err != nil {
		return nil, err
	}
	body := map[string]any{"command": cmd.Argv[0], "args": append([]string{}, cmd.Argv[1:]...), "env": env, "sudo": false, "wait": true}
	if cmd.Dir != "" {
		body["cwd"] = cmd.Dir
	}
	if err := p.start(ctx, body); err != nil {
		s.slot.Release(p)
		return nil, err
	}
	return p, nil
}

// A Process is one command. stdout and stderr are separate (each NDJSON
// log line names its stream); there is no stdin ([StdioCaveats]). Read
// Stdout and Stderr both until EOF and call Wait to reap it.
type Process struct {
	s     *Sandbox
	cmdID string

	stdoutR *io.PipeReader
	stderrR *io.PipeReader

	killMu sync.Mutex // guards killed
	killed bool

	exit *vendorkit.Exit // Wait's answer, once reaped
}

func (p *Process) start(ctx context.Context, body map[string]any) error {
	c := p.s.c
	path := "/v2/sandboxes/sessions/" + url.PathEscape(p.s.session) + "/cmd"
	resp, err := c.send(context.WithoutCancel(ctx), http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		resp.Body.Close()
		return checkfu.Refuse(CodeSandboxSessionRefused, "vercel: POST %s answered %d %s, not an NDJSON stream", path, resp.StatusCode, checkfu.Quote(resp.Header.Get("Content-Type")))
	}
	// The stream outlives ctx, which bounds only the wait for the
	// command's first line: a vendor that sends nothing holds
	// OpenProcess until ctx ends, when the stream is closed.
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	got := make(chan error, 1)
	go func() {
		first, err := nextLine(br)
		if err == nil {
			p.cmdID, err = commandID(first)
		}
		got <- err
	}()
	select {
	case err = <-got:
	case <-ctx.Done():
		resp.Body.Close()
		<-got
		err = context.Cause(ctx)
	}
	if err != nil {
		resp.Body.Close()
		return err
	}
	var outW, errW *io.PipeWriter
	p.stdoutR, outW = io.Pipe()
	p.stderrR, errW = io.Pipe()
	go p.read(resp.Body, br, outW, errW)
	return nil
}

// nextLine reads and strictly parses one NDJSON line.
func nextLine(br *bufio.Reader) (map[string]any, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, checkfu.Refuse(CodeCommandStreamInvalid, "vercel: a command stream line over %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(bytes.TrimSpace(line)) == 0 {
			return nil, checkfu.Refuse(CodeCommandStreamInvalid, "vercel: the command stream ended before the command finished")
		}
		break
	}
	v, err := strictjson.Parse(bytes.TrimSpace(line), jsonOpts)
	if err != nil {
		return nil, &checkfu.Refusal{Code: CodeCommandStreamInvalid, Message: "vercel: a command stream line is not strict JSON", Err: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, checkfu.Refuse(CodeCommandStreamInvalid, "vercel: a command stream line is not an object")
	}
	return m, nil
}

func commandID(m map[string]any) (string, error) {
	cmd, _ := m["command"].(map[string]any)
	id, _ := cmd["id"].(string)
	if !vendorkit.PathSafeID(id, "") {
		return "", checkfu.Refuse(CodeCommandStreamInvalid, "vercel: the command stream's first line names no command")
	}
	return id, nil
}

func (p *Process) read(body io.Closer, br *bufio.Reader, outW, errW *io.PipeWriter) {
	status, err := -1, error(nil)
	for {
		m, e := nextLine(br)
		if e != nil {
			err = e
			break
		}
		if cmd, ok := m["command"].(map[string]any); ok {
			status, err = p.exitStatus(cmd["exitCode"])
			break
		}
		stream, _ := m["stream"].(string)
		switch stream {
		case "stdout", "stderr":
			data, ok := m["data"].(string)
			if !ok {
				err = checkfu.Refuse(CodeCommandStreamInvalid, "vercel: a log line without data")
			}
			w := outW
			if stream == "stderr" {
				w = errW
			}
			if len(data) > 0 {
				_, _ = io.WriteString(w, data) // a reader that went away fails at once
			}
		case "error":
			d, _ := m["data"].(map[string]any)
			code, _ := d["code"].(string)
			msg, _ := d["message"].(string)
			err = checkfu.Refuse(CodeCommandStreamInvalid, "vercel: the command stream reported %s: %s", checkfu.Quote(code), checkfu.Quote(msg))
		default:
			err = checkfu.Refuse(CodeCommandStreamInvalid, "vercel: a log line on stream %s", checkfu.Quote(stream))
		}
		if err != nil {
			break
		}
	}
	body.Close()
	outW.CloseWithError(err)
	errW.CloseWithError(err)
	p.s.slot.Reap(p, p.exit, status, err)
}

// exitStatus reads the final exit code; a command killed by the adapter
// whose code Vercel reports outside 0-255 is 128+SIGKILL.
func (p *Process) exitStatus(v any) (int, error) {
	n, ok := v.(json.Number)
	code, err := strconv.Atoi(string(n))
	if ok && err == nil && code >= 0 && code <= 255 {
		return code, nil
	}
	p.killMu.Lock()
	killed := p.killed
	p.killMu.Unlock()
	if killed {
		return 137, nil
	}
	return -1, checkfu.Refuse(CodeCommandStreamInvalid, "vercel: the final command line has exit code %s", checkfu.Quote(fmt.Sprint(v)))
}

// Stdin returns the process's standard input, which Vercel's ordinary
// commands do not have: Write is refused with [CodeStdinUnsupported];
// Close returns nil (the process has read end of input from the start).
func (p *Process) Stdin() io.WriteCloser { return noStdin{} }

type noStdin struct{}

func (noStdin) Write([]byte) (int, error) {
	return 0, checkfu.Refuse(CodeStdinUnsupported, "vercel: Vercel Sandbox commands take no stdin")
}

func (noStdin) Close() error { return nil }

// Stdout returns the process's standard output; it ends with io.EOF.
func (p *Process) Stdout() io.Reader { return p.stdoutR }

// Stderr returns the process's standard error; it ends with io.EOF.
func (p *Process) Stderr() io.Reader { return p.stderrR }

// Wait waits for the final command line and returns the exit status.
func (p *Process) Wait() (int, error) {
	return p.exit.Wait()
}

// Kill sends SIGKILL (POST .../cmd/{cmdId}/kill). It is idempotent and
// does not wait.
func (p *Process) Kill() error {
	if p.exit.Ended() {
		return nil
	}
	p.killMu.Lock()
	p.killed = true
	p.killMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)
	defer cancel()
	_, err := p.s.c.call(ctx, http.MethodPost, "/v2/sandboxes/sessions/"+url.PathEscape(p.s.session)+"/cmd/"+url.PathEscape(p.cmdID)+"/kill", map[string]any{"signal": 9}, http.StatusOK)
	if p.exit.Ended() {
		return nil
	}
	return err
}

// Evidence returns what the adapter reports about the process's sandbox.
func (p *Process) Evidence() Evidence {
	e := p.s.evidence
	e.Stdio = append([]string(nil), e.Stdio...)
	return e
}
