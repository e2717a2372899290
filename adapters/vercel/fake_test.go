package vercel_test

import (
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
	"unicode/utf8"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// fakeVercel is an in-process Vercel Sandbox API on loopback. Every
// request is validated against testdata/sandbox.yaml (a deviation fails
// the test); commands run as real local processes with no stdin, and
// their output streams back as NDJSON lines, as the API does.
type fakeVercel struct {
	t    testing.TB
	key  string
	team string
	spec *vendortest.Spec
	srv  *httptest.Server

	mu       sync.Mutex
	sessions map[string]*fakeSession
	created  []map[string]any
	seq      int
}

type fakeSession struct {
	none    bool // deny-all
	dir     string
	stopped bool
	cmds    map[string]*exec.Cmd
}

func newFakeVercel(t testing.TB, key, team string) *fakeVercel {
	f := &fakeVercel{t: t, key: key, team: team, spec: vendortest.LoadSpec(t, "testdata/sandbox.yaml", vendortest.Bearer), sessions: map[string]*fakeSession{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.mu.Lock()
		for _, s := range f.sessions {
			s.stop()
		}
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

func (s *fakeSession) stop() {
	s.stopped = true
	for _, c := range s.cmds {
		if c.Process != nil {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeVercel) serve(w http.ResponseWriter, r *http.Request) {
	route, err := f.spec.Check(r, func(_, v string) error {
		if v != f.key {
			return errors.New("wrong token")
		}
		return nil
	})
	if err == nil && r.URL.Query().Get("teamId") != f.team {
		err = errors.New("wrong teamId")
	}
	if err != nil {
		f.t.Errorf("fake vercel: %s %s deviates from the published API: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "bad_request"}})
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v2/sandboxes/sessions/"), "/")
	f.mu.Lock()
	var sess *fakeSession
	if route.Operation.OperationID != "createSandbox" {
		sess = f.sessions[parts[0]]
		if sess == nil || sess.stopped {
			f.mu.Unlock()
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found"}})
			return
		}
	}
	switch route.Operation.OperationID {
	case "createSandbox":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.created = append(f.created, body)
		f.seq++
		id := "sess_" + strconv.Itoa(f.seq)
		np, _ := body["networkPolicy"].(map[string]any)
		f.sessions[id] = &fakeSession{dir: f.t.TempDir(), cmds: map[string]*exec.Cmd{}, none: np["mode"] == "deny-all"}
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{
			"sandbox": map[string]any{"name": "sbx_" + strconv.Itoa(f.seq), "persistent": false, "createdAt": 1, "updatedAt": 1, "currentSessionId": id, "status": "running"},
			"session": map[string]any{"id": id, "memory": 2048, "vcpus": 1, "region": "iad1", "timeout": body["timeout"], "status": "running", "requestedAt": 1, "createdAt": 1, "cwd": "/vercel/sandbox", "updatedAt": 1},
			"routes":  []any{},
		})
	case "stopSession":
		sess.stop()
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"session": map[string]any{"id": parts[0], "status": "stopped"}})
	case "killCommand":
		c := sess.cmds[parts[2]]
		f.mu.Unlock()
		if c == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found"}})
			return
		}
		_ = c.Process.Signal(syscall.SIGKILL)
		writeJSON(w, http.StatusOK, map[string]any{"command": map[string]any{"id": parts[2], "exitCode": nil}})
	case "runCommand":
		var body struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Cwd     string            `json:"cwd"`
			Env     map[string]string `json:"env"`
			Wait    bool              `json:"wait"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		if !body.Wait {
			f.mu.Unlock()
			f.t.Errorf("fake vercel: the adapter must stream with wait=true")
			writeJSON(w, http.StatusBadRequest, map[string]any{})
			return
		}
		f.seq++
		id := "cmd_" + strconv.Itoa(f.seq)
		c := exec.Command(body.Command, body.Args...)
		c.Dir = sess.dir
		if body.Cwd != "" {
			c.Dir = body.Cwd
		}
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sess.dir, "TMPDIR=" + sess.dir} // the sandbox's own /tmp
		for k, v := range body.Env {
			c.Env = append(c.Env, k+"="+v)
		}
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		vendortest.Isolate(c, sess.none)
		sess.cmds[id] = c
		f.mu.Unlock()
		f.run(w, id, c, body.Command, body.Args)
	}
}

func (f *fakeVercel) run(w http.ResponseWriter, id string, c *exec.Cmd, name string, args []string) {
	stdout, _ := c.StdoutPipe()
	stderr, _ := c.StderrPipe()
	w.Header().Set("Content-Type", "application/x-ndjson")
	fl := w.(http.Flusher)
	var mu sync.Mutex
	line := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
		fl.Flush()
	}
	cmd := map[string]any{"id": id, "name": name, "args": args, "cwd": c.Dir, "sessionId": "s", "exitCode": nil, "startedAt": 1}
	if err := c.Start(); err != nil {
		line(map[string]any{"stream": "error", "data": map[string]any{"code": "command_failed", "message": err.Error()}})
		return
	}
	line(map[string]any{"command": cmd})
	var wg sync.WaitGroup
	pump := func(r io.Reader, stream string) {
		defer wg.Done()
		buf := make([]byte, 16<<10)
		var carry []byte
		for {
			n, err := r.Read(buf)
			data := append(carry, buf[:n]...)
			// JSON strings carry text: cut at a character boundary
			cut := len(data)
			for cut > 0 && !utf8.Valid(data[:cut]) && len(data)-cut < 4 {
				cut--
			}
			if cut > 0 {
				line(map[string]any{"stream": stream, "data": string(data[:cut])})
			}
			carry = append([]byte(nil), data[cut:]...)
			if err != nil {
				if len(carry) > 0 {
					line(map[string]any{"stream": stream, "data": string(carry)})
				}
				return
			}
		}
	}
	wg.Add(2)
	go pump(stdout, "stdout")
	go pump(stderr, "stderr")
	wg.Wait()
	_ = c.Wait()
	code := c.ProcessState.ExitCode() // -1 when a signal ended it
	cmd["exitCode"] = code
	line(map[string]any{"command": cmd})
}
