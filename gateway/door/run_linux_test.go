package door_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/door"
	"github.com/checkfu/checkfu/internal/clitest"
)

// runDoor starts the real door program running agent (a shell script)
// and returns it with its input, and the first line the agent printed.
func runDoor(t *testing.T, agent string) (*exec.Cmd, *os.File, string) {
	t.Helper()
	cmd := exec.Command(clitest.Door(t), "run", "-socket", filepath.Join(t.TempDir(), "none.sock"), "--", "sh", "-c", agent)
	input, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	return cmd, input.(*os.File), strings.TrimSpace(line)
}

// waitDoor waits up to 30 seconds for the door to exit, and returns its
// exit code.
func waitDoor(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the door did not exit within 30 s of its input ending (InputGrace %v, StopGrace %v)", door.InputGrace, door.StopGrace)
		return -1
	}
}

// gone reports whether pid has exited (absent, or a zombie nobody has
// reaped yet), waiting up to ten seconds for it.
func gone(pid int) bool {
	for range 100 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestRunStopsAnAgentThatOutlivesItsInput: an agent that ignores the end
// of its input, and a child it left running, are stopped once the door's
// input ends: SIGTERM to the agent's process group after InputGrace, and
// whatever is left of the group is killed when the agent ends. An agent
// that exits on the end of its input exits by itself, with its own code.
func TestRunStopsAnAgentThatOutlivesItsInput(t *testing.T) {
	cmd, input, line := runDoor(t, `sleep 300 & echo $!; wait`)
	child, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("the agent printed %q, not its child's pid", line)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	input.Close()
	if code := waitDoor(t, cmd); code != 128+int(syscall.SIGTERM) {
		t.Errorf("the door exited %d, want %d (the agent stopped by SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	if !gone(child) {
		t.Errorf("the agent's child %d outlived the door", child)
	}

	// Control: an agent that reads its input to the end exits by itself.
	cmd, input, line = runDoor(t, `echo started; cat >/dev/null; exit 3`)
	if line != "started" {
		t.Fatalf("the agent printed %q", line)
	}
	input.Write([]byte("a line for the agent\n"))
	input.Close()
	if code := waitDoor(t, cmd); code != 3 {
		t.Errorf("the agent that read its input to the end exited %d, want its own 3", code)
	}
}
