package e2b_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// fakeE2B is an in-process E2B: the control plane on one loopback
// server, and one envd per sandbox on its own loopback server (as each
// real sandbox has its own host). Every request is validated against
// testdata/control.yaml or testdata/envd.yaml and a deviation fails the
// test. Commands run as real local processes (os/exec), so stdout,
// stderr, stdin and exit codes are those of real processes.
type fakeE2B struct {
	t       testing.TB
	key     string // the API key the control plane expects
	control *vendortest.Spec
	envd    *vendortest.Spec
	srv     *httptest.Server

	mu        sync.Mutex
	sandboxes map[string]*fakeSandbox
	created   []map[string]any // every NewSandbox body, in order
	seq       int
	echoKey   bool // answer POST /sandboxes 500 with the request's headers in the body
}

type fakeSandbox struct {
	none  bool // allow_internet_access false and nothing allowed: no network
	id    string
	token string
	srv   *httptest.Server
	dir   string

	mu    sync.Mutex
	procs map[uint32]*fakeProc
}

type fakeProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	outs  []io.Closer // closed on SIGKILL, as envd cancels output then
}

func newFakeE2B(t testing.TB, key string) *fakeE2B {
	f := &fakeE2B{t: t, key: key, control: vendortest.LoadSpec(t, "testdata/control.yaml", vendortest.APIKeyHeader), envd: vendortest.LoadSpec(t, "testdata/envd.yaml", vendortest.APIKeyHeader), sandboxes: map[string]*fakeSandbox{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveControl))
	t.Cleanup(f.close)
	return f
}

func (f *fakeE2B) close() {
	f.srv.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sandboxes {
		s.kill()
	}
}

func (f *fakeE2B) deviation(w http.ResponseWriter, what string, err error) {
	f.t.Errorf("fake e2b: %s deviates from the published API: %v", what, err)
	http.Error(w, `{"code":400,"message":"bad request"}`, http.StatusBadRequest)
}

// envdURL is the Config.Envd hook: sandbox id to its envd server.
func (f *fakeE2B) envdURL(id, domain string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if domain != "fake.e2b.test" {
		f.t.Errorf("fake e2b: envd asked for domain %q", domain)
	}
	return f.sandboxes[id].srv.URL
}

func (f *fakeE2B) serveControl(w http.ResponseWriter, r *http.Request) {
	route, err := f.control.Check(r, func(scheme, v string) error {
		if v != f.key {
			return errors.New("wrong API key")
		}
		return nil
	})
	if err != nil {
		f.deviation(w, r.Method+" "+r.URL.Path, err)
		return
	}
	switch route.Operation.OperationID {
	case "createSandbox":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.created = append(f.created, body)
		echo := f.echoKey
		f.seq++
		id := "sbx" + strconv.Itoa(f.seq)
		f.mu.Unlock()
		if echo {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"code":500,"message":"headers: %v"}`, r.Header)
			return
		}
		netw, _ := body["network"].(map[string]any)
		_, allows := netw["allowOut"]
		s := &fakeSandbox{id: id, token: "envd-token-" + id, dir: f.t.TempDir(), procs: map[uint32]*fakeProc{}, none: body["allow_internet_access"] == false && !allows}
		s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serveEnvd(s, w, r) }))
		f.mu.Lock()
		f.sandboxes[id] = s
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"templateID": body["templateID"], "sandboxID": id, "clientID": "c", "envdVersion": "0.1.3",
			"envdAccessToken": s.token, "trafficAccessToken": nil, "domain": "fake.e2b.test",
		})
	case "killSandbox":
		id := strings.TrimPrefix(r.URL.Path, "/sandboxes/")
		f.mu.Lock()
		s, ok := f.sandboxes[id]
		delete(f.sandboxes, id)
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		s.kill()
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *fakeSandbox) kill() {
	s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // the whole VM goes
	}
}

func (f *fakeE2B) serveEnvd(s *fakeSandbox, w http.ResponseWriter, r *http.Request) {
	_, err := f.envd.Check(r, func(scheme, v string) error {
		if v != s.token {
			return errors.New("wrong envd access token")
		}
		return nil
	})
	if err != nil {
		f.deviation(w, "envd "+r.URL.Path, err)
		return
	}
	if u, _, ok := r.BasicAuth(); !ok || u != "user" {
		f.deviation(w, "envd "+r.URL.Path, errors.New("no basic-auth user"))
		return
	}
	body, _ := io.ReadAll(r.Body)
	method := strings.TrimPrefix(r.URL.Path, "/process.Process/")
	if method == "Start" {
		f.start(s, w, body)
		return
	}
	var in struct {
		Process struct {
			Pid uint32 `json:"pid"`
		} `json:"process"`
		Input struct {
			Stdin []byte `json:"stdin"`
		} `json:"input"`
		Signal string `json:"signal"`
	}
	_ = json.Unmarshal(body, &in)
	s.mu.Lock()
	p, ok := s.procs[in.Process.Pid]
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":"not_found","message":"process not found"}`)
		return
	}
	switch method {
	case "SendInput":
		if _, err := p.stdin.Write(in.Input.Stdin); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"code":"internal","message":"stdin closed"}`)
			return
		}
	case "CloseStdin":
		_ = p.stdin.Close()
	case "SendSignal":
		// envd signals the process itself, not its group.
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		for _, c := range p.outs {
			_ = c.Close()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

func connectEnvelope(flags byte, msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	b[0] = flags
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

func (f *fakeE2B) start(s *fakeSandbox, w http.ResponseWriter, body []byte) {
	if len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		f.deviation(w, "envd Start", errors.New("the body is not one uncompressed Connect envelope"))
		return
	}
	var req any
	if err := json.Unmarshal(body[5:], &req); err != nil {
		f.deviation(w, "envd Start", err)
		return
	}
	if err := f.envd.Schema("StartRequest", req); err != nil {
		f.deviation(w, "envd Start", err)
		return
	}
	var sr struct {
		Process struct {
			Cmd  string            `json:"cmd"`
			Args []string          `json:"args"`
			Envs map[string]string `json:"envs"`
			Cwd  *string           `json:"cwd"`
		} `json:"process"`
		Stdin bool `json:"stdin"`
	}
	_ = json.Unmarshal(body[5:], &sr)
	cmd := exec.Command(sr.Process.Cmd, sr.Process.Args...)
	cmd.Dir = s.dir
	if sr.Process.Cwd != nil {
		cmd.Dir = *sr.Process.Cwd
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "TMPDIR=" + s.dir} // the sandbox's own /tmp
	for k, v := range sr.Process.Envs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so that killing the sandbox reaches every process
	vendortest.Isolate(cmd, s.none)
	stdin, _ := cmd.StdinPipe()
	if !sr.Stdin {
		stdin.Close()
	}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	w.Header().Set("Content-Type", "application/connect+json")
	fl := w.(http.Flusher)
	var wmu sync.Mutex
	send := func(flags byte, v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = w.Write(connectEnvelope(flags, b))
		fl.Flush()
	}
	if err := cmd.Start(); err != nil {
		send(2, map[string]any{"error": map[string]any{"code": "invalid_argument", "message": err.Error()}})
		return
	}
	pid := uint32(cmd.Process.Pid)
	s.mu.Lock()
	s.procs[pid] = &fakeProc{cmd: cmd, stdin: stdin, outs: []io.Closer{stdout, stderr}}
	s.mu.Unlock()
	send(0, map[string]any{"event": map[string]any{"start": map[string]any{"pid": pid}}})
	var wg sync.WaitGroup
	pump := func(r io.Reader, name string) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				send(0, map[string]any{"event": map[string]any{"data": map[string]any{name: base64.StdEncoding.EncodeToString(buf[:n])}}})
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(stdout, "stdout")
	go pump(stderr, "stderr")
	wg.Wait()
	err := cmd.Wait()
	s.mu.Lock()
	delete(s.procs, pid)
	s.mu.Unlock()
	ps := cmd.ProcessState
	end := map[string]any{"status": ps.String()}
	if c := ps.ExitCode(); c != 0 { // protojson omits zero values
		end["exitCode"] = c
	}
	if ps.Exited() {
		end["exited"] = true
	}
	if err != nil && !ps.Exited() {
		end["error"] = err.Error()
	}
	send(0, map[string]any{"event": map[string]any{"end": end}})
	send(2, map[string]any{})
}

func init() { vendortest.AcceptConnectJSON() }
