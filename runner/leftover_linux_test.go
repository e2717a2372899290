package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// pidNamespaces reports whether this kernel lets the Runner's uid make a
// PID namespace as adapters/process does (inside a user namespace
// unless root).
func pidNamespaces() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if uid := os.Getuid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	return cmd.Run() == nil
}

// gone reports whether pid is no process, or a dead one not yet reaped.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// TestALeftChildCannotCallInTheNextAgentsLife: the first agent of a
// session leaves a child behind, in a session of its own, holding the
// agent's environment (the broker socket's path, which the next agent's
// broker listens on too) and waiting to call a tool. The child dies
// with the agent, before the next agent launches, so it never calls
// during the next agent's life. On the process provider this rests on
// its PID namespace; where the kernel makes none the test skips. If the
// child survives (the mutant that takes the namespace away), the test
// lets it go and shows its call reaching the upstream in the second
// agent's life.
func TestALeftChildCannotCallInTheNextAgentsLife(t *testing.T) {
	if !pidNamespaces() {
		t.Skip("the kernel makes no PID namespace for this uid: adapters/process falls back to its process group")
	}
	g := newRig(t, nil)
	s := g.admitted(t)
	dir := t.TempDir()
	pidFile, goFile := filepath.Join(dir, "pid"), filepath.Join(dir, "go")
	list := []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}}
	spec := agentSpec(t, list)
	// The child: its host pid written, it waits for the go file, then
	// prompts a copy of the scripted agent (same script, same broker
	// path) to play its turn.
	prompt := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"left","prompt":[]}}`
	child := `read pid _ < /proc/self/stat; echo $pid > ` + pidFile + `; while [ ! -e ` + goFile + ` ]; do sleep 0.05; done; { echo '` + prompt + `'; sleep 30; } | "$0"`
	spec.Argv = append([]string{"/bin/sh", "-c", `setsid /bin/sh -c '` + strings.ReplaceAll(child, `'`, `'\''`) + `' "$0" </dev/null >/dev/null 2>&1 & exec "$0"`}, spec.Argv...)
	pid := 0
	t.Cleanup(func() {
		os.WriteFile(goFile, nil, 0o600)
		if pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	_, _ = launchTurn(t, s, runner.LaunchConfig{Stderr: os.Stderr}, spec)
	if g.hits.Load() != 1 {
		t.Fatalf("the first agent's call reached the upstream %d times, want 1", g.hits.Load())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || pid <= 1 {
		t.Fatalf("the child's pid: %q, %v", b, err)
	}
	dead := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if dead = gone(pid); dead {
			break
		}
	}
	if dead {
		return // it cannot call during anyone's life
	}
	// It outlived the agent: let it try during the next agent's life.
	a, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, nil), Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	os.WriteFile(goFile, nil, 0o600)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && g.hits.Load() == 1; time.Sleep(20 * time.Millisecond) {
	}
	t.Fatalf("a child the first agent left behind outlived it by 20 s; during the next agent's life its calls reached the upstream %d times", g.hits.Load()-1)
}
