// Package clitest builds the checkfu binary once per test process, for
// tests that must run the real CLI as a separate process (a guard that
// listens, a log writer killed with SIGKILL, serve/attach across a cut).
package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once   sync.Once
	binary string
	errMsg string
)

// Binary returns the path of a freshly built checkfu binary. The build is
// shared by every test in the process; it is built with -race when the test
// binary is. The binary lives in a temporary directory removed at exit by
// the OS temp cleaner only, so callers must not modify it.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, err := os.MkdirTemp("", "checkfu-bin-")
		if err != nil {
			errMsg = err.Error()
			return
		}
		binary = filepath.Join(dir, "checkfu")
		args := []string{"build", "-o", binary}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/checkfu/checkfu/cmd/checkfu")
		cmd := exec.Command(goTool(), args...)
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			errMsg = "go build: " + err.Error() + "\n" + string(out)
		}
	})
	if errMsg != "" {
		t.Fatal(errMsg)
	}
	return binary
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// moduleRoot finds the directory holding go.mod above this file's package.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
