package daytona_test

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// fakeDaytona is an in-process Daytona: the sandbox API on one loopback
// server and the toolbox proxy on another, every request validated
// against testdata/api.yaml or testdata/toolbox.yaml (a deviation fails
// the test). Commands run as real local processes; their output is
// relabelled line by line with the daemon's prefixes, input is written
// to a pipe that is never closed, and the log streams over a real
// WebSocket, as the daemon does.
type fakeDaytona struct {
	t       testing.TB
	key     string
	api     *vendortest.Spec
	toolbox *vendortest.Spec
	apiSrv  *httptest.Server
	tbSrv   *httptest.Server

	mu        sync.Mutex
	sandboxes map[string]*fakeSandbox
	created   []map[string]any
	seq       int
	polls     int
}

type fakeSandbox struct {
	none     bool // networkBlockAll
	id       string
	started  bool
	dir      string
	sessions map[string]*fakeSession
}

type fakeSession struct {
	cmds map[string]*fakeCmd
}

type fakeCmd struct {
	id, command string
	proc        *exec.Cmd
	stdin       io.WriteCloser
	echo        bool

	mu       sync.Mutex
	cond     *sync.Cond
	log      []byte
	exitCode *int
	ended    bool // the log is complete (exit recorded, or session deleted)
}

func newFakeDaytona(t testing.TB, key string) *fakeDaytona {
	f := &fakeDaytona{t: t, key: key, api: vendortest.LoadSpec(t, "testdata/api.yaml", vendortest.Bearer), toolbox: vendortest.LoadSpec(t, "testdata/toolbox.yaml", vendortest.Bearer), sandboxes: map[string]*fakeSandbox{}}
	f.apiSrv = httptest.NewServer(http.HandlerFunc(f.serveAPI))
	f.tbSrv = httptest.NewServer(http.HandlerFunc(f.serveToolbox))
	t.Cleanup(f.close)
	return f
}

func (f *fakeDaytona) close() {
	f.mu.Lock()
	for _, s := range f.sandboxes {
		for _, sess := range s.sessions {
			sess.kill()
		}
	}
	f.mu.Unlock()
	f.apiSrv.Close()
	f.tbSrv.Close()
}

func (f *fakeDaytona) auth(_, v string) error {
	if v != f.key {
		return errors.New("wrong API key")
	}
	return nil
}

func (f *fakeDaytona) deviation(w http.ResponseWriter, what string, err error) {
	f.t.Errorf("fake daytona: %s deviates from the published API: %v", what, err)
	http.Error(w, `{"statusCode":400,"message":"bad request"}`, http.StatusBadRequest)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeDaytona) serveAPI(w http.ResponseWriter, r *http.Request) {
	route, err := f.api.Check(r, f.auth)
	if err != nil {
		f.deviation(w, r.Method+" "+r.URL.Path, err)
		return
	}
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/sandbox/"), "/toolbox-proxy-url")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch route.Operation.OperationID {
	case "createSandbox":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.created = append(f.created, body)
		f.seq++
		id := "dt-" + strconv.Itoa(f.seq)
		f.sandboxes[id] = &fakeSandbox{id: id, dir: f.t.TempDir(), sessions: map[string]*fakeSession{}, none: body["networkBlockAll"] == true}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "creating", "networkBlockAll": body["networkBlockAll"]})
	case "getSandbox":
		s, ok := f.sandboxes[id]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "not found"})
			return
		}
		f.polls++
		s.started = true
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "started"})
	case "getToolboxProxyUrl":
		writeJSON(w, http.StatusOK, map[string]any{"url": f.tbSrv.URL + "/toolbox"})
	case "deleteSandbox":
		s, ok := f.sandboxes[id]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "not found"})
			return
		}
		for _, sess := range s.sessions {
			sess.kill()
		}
		delete(f.sandboxes, id)
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "destroyed"})
	}
}

func (sess *fakeSession) kill() {
	for _, c := range sess.cmds {
		if c.proc.Process != nil {
			_ = syscall.Kill(-c.proc.Process.Pid, syscall.SIGKILL)
		}
		c.mu.Lock()
		c.ended = true
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

func (f *fakeDaytona) serveToolbox(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/toolbox/")
	sbID, path, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		f.deviation(w, "toolbox "+r.URL.Path, errors.New("not under {toolboxProxyUrl}/{sandboxId}"))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + path
	r2.URL.RawPath = ""
	route, err := f.toolbox.Check(r2, f.auth)
	if err != nil {
		f.deviation(w, "toolbox "+r.Method+" /"+path, err)
		return
	}
	f.mu.Lock()
	s, ok := f.sandboxes[sbID]
	if !ok || !s.started {
		f.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "sandbox not found or not started"})
		return
	}
	parts := strings.Split(path, "/") // process session {sid} [exec | command {cid} [input|logs]]
	var sess *fakeSession
	var cmd *fakeCmd
	if len(parts) >= 3 {
		sess = s.sessions[parts[2]]
		if sess != nil && len(parts) >= 5 {
			cmd = sess.cmds[parts[4]]
		}
	}
	op := route.Operation.OperationID
	if op != "CreateSession" && (sess == nil || (len(parts) >= 5 && cmd == nil)) {
		f.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "session or command not found"})
		return
	}
	switch op {
	case "CreateSession":
		var body struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.NewDecoder(r2.Body).Decode(&body)
		if _, dup := s.sessions[body.SessionID]; dup {
			f.mu.Unlock()
			writeJSON(w, http.StatusConflict, map[string]any{"message": "session exists"})
			return
		}
		s.sessions[body.SessionID] = &fakeSession{cmds: map[string]*fakeCmd{}}
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case "DeleteSession":
		delete(s.sessions, parts[2])
		f.mu.Unlock()
		sess.kill()
		w.WriteHeader(http.StatusNoContent)
	case "SessionExecuteCommand":
		var body struct {
			Command           string `json:"command"`
			RunAsync          bool   `json:"runAsync"`
			SuppressInputEcho bool   `json:"suppressInputEcho"`
		}
		_ = json.NewDecoder(r2.Body).Decode(&body)
		f.seq++
		c := &fakeCmd{id: "cmd-" + strconv.Itoa(f.seq), command: body.Command, echo: !body.SuppressInputEcho}
		c.cond = sync.NewCond(&c.mu)
		sess.cmds[c.id] = c
		dir, none := s.dir, s.none
		f.mu.Unlock()
		if !body.RunAsync {
			f.deviation(w, "exec", errors.New("the adapter must run commands asynchronously"))
			return
		}
		c.start(dir, none)
		writeJSON(w, http.StatusAccepted, map[string]any{"cmdId": c.id})
	case "GetSessionCommand":
		f.mu.Unlock()
		c := cmd
		c.mu.Lock()
		out := map[string]any{"id": c.id, "command": c.command}
		if c.exitCode != nil {
			out["exitCode"] = *c.exitCode
		}
		c.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	case "SendInput":
		f.mu.Unlock()
		var body struct {
			Data string `json:"data"`
		}
		_ = json.NewDecoder(r2.Body).Decode(&body)
		cmd.input(w, body.Data)
	case "GetSessionCommandLogs":
		f.mu.Unlock()
		if r.URL.Query().Get("follow") != "true" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			f.deviation(w, "logs", errors.New("the adapter must follow the log over a WebSocket"))
			return
		}
		if v := r.Header.Get("X-Daytona-SDK-Version"); v != "0.190.0" {
			f.deviation(w, "logs", errors.New("no SDK version: the daemon would merge stdout and stderr"))
			return
		}
		cmd.stream(w, r)
	}
}

// start runs the command the way the daemon's wrapper does: a shell,
// stdin from a pipe nobody closes, each output line prefixed.
func (c *fakeCmd) start(dir string, none bool) {
	c.proc = exec.Command("/bin/sh", "-c", c.command)
	c.proc.Dir = dir
	c.proc.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir} // the sandbox's own /tmp
	c.proc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	vendortest.Isolate(c.proc, none)
	c.stdin, _ = c.proc.StdinPipe()
	stdout, _ := c.proc.StdoutPipe()
	stderr, _ := c.proc.StderrPipe()
	if err := c.proc.Start(); err != nil {
		code := 127
		c.exitCode, c.ended = &code, true
		return
	}
	var wg sync.WaitGroup
	label := func(r io.Reader, prefix []byte) {
		defer wg.Done()
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			line = bytes.TrimSuffix(line, []byte("\n"))
			if len(line) > 0 || err == nil {
				line = bytes.ReplaceAll(line, []byte{0}, nil) // read -r drops NULs
				c.append(append(append(append([]byte{}, prefix...), line...), '\n'))
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go label(stdout, []byte{1, 1, 1})
	go label(stderr, []byte{2, 2, 2})
	go func() {
		wg.Wait()
		_ = c.proc.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if ws, ok := c.proc.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			c.ended = true // the wrapper died with it: no exit code is written
		} else {
			code := c.proc.ProcessState.ExitCode()
			c.exitCode, c.ended = &code, true
		}
		c.cond.Broadcast()
	}()
}

func (c *fakeCmd) append(b []byte) {
	c.mu.Lock()
	c.log = append(c.log, b...)
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *fakeCmd) input(w http.ResponseWriter, data string) {
	c.mu.Lock()
	ended := c.exitCode != nil || c.ended
	c.mu.Unlock()
	if ended {
		writeJSON(w, http.StatusGone, map[string]any{"message": "command has already completed"})
		return
	}
	if !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	_, _ = io.WriteString(c.stdin, data)
	if c.echo {
		c.append(append([]byte{1, 1, 1}, data...))
	}
	w.WriteHeader(http.StatusNoContent)
}

// stream serves the log over a WebSocket from its start, following it
// until the command has ended, then closes.
func (c *fakeCmd) stream(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Sec-WebSocket-Key")
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n")
	// Read (and drop) what the client sends, the pong and its close
	// frame: a socket closed with unread input is reset, and a reset
	// can destroy frames the client has not read yet. After the close
	// frame, the client's own close ends the read (RFC 6455's closing
	// handshake), bounded so that a client that never closes cannot hold
	// the fake.
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		io.Copy(io.Discard, brw.Reader)
	}()
	frame := func(op byte, p []byte) {
		b := []byte{0x80 | op}
		switch {
		case len(p) < 126:
			b = append(b, byte(len(p)))
		case len(p) < 1<<16:
			b = append(b, 126, byte(len(p)>>8), byte(len(p)))
		default:
			b = append(b, 127)
			b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
		}
		brw.Write(append(b, p...))
		brw.Flush()
	}
	frame(0x9, []byte("ping")) // the daemon keeps the socket alive; the client must answer
	sent := 0
	for {
		c.mu.Lock()
		for len(c.log) == sent && !c.ended {
			c.cond.Wait()
		}
		chunk := append([]byte(nil), c.log[sent:]...)
		ended := c.ended
		c.mu.Unlock()
		for len(chunk) > 0 { // split at odd places, prefixes included
			n := min(len(chunk), 1000+sent%7)
			frame(0x2, chunk[:n])
			chunk = chunk[n:]
			sent += n
		}
		if ended {
			c.mu.Lock()
			done := len(c.log) == sent
			c.mu.Unlock()
			if done {
				frame(0x8, []byte{0x03, 0xe8})
				select {
				case <-clientDone:
				case <-time.After(5 * time.Second):
				}
				return
			}
		}
	}
}
