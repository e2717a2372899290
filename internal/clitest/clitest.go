// Package clitest builds the checkfu binary once per test process, for
// tests that must run the real CLI as a separate process (a guard that
// listens, a log writer killed with SIGKILL, serve/attach across a cut).
//
// A package that uses it runs its tests through [Run], which removes the
// binary afterwards:
//
//	func TestMain(m *testing.M) { os.Exit(clitest.Run(m)) }
package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

var (
	running bool // set by Run before any test starts
	once    sync.Once
	dir     string // the build's temporary directory; removed by Run
	binary  string
	errMsg  string
	doorDir string // Door's build directory; removed by Run
)

// Run runs the tests of m and then removes the binary [Binary] built, if
// any. It returns m.Run's exit code, for os.Exit in TestMain.
func Run(m *testing.M) int {
	running = true
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	if doorDir != "" {
		os.RemoveAll(doorDir)
	}
	return code
}

// Binary returns the path of a freshly built checkfu binary. The build is
// shared by every test in the process; it is built with -race when the test
// binary is. Callers must not modify it. It fails the test unless the
// package's TestMain runs its tests through [Run], which removes the build.
func Binary(t testing.TB) string {
	t.Helper()
	if !running {
		t.Fatal("clitest: call clitest.Run from TestMain so the built binary is removed: func TestMain(m *testing.M) { os.Exit(clitest.Run(m)) }")
	}
	once.Do(func() {
		var err error
		dir, err = os.MkdirTemp("", "checkfu-bin-")
		if err != nil {
			errMsg = err.Error()
			return
		}
		binary = filepath.Join(dir, "checkfu")
		args := []string{"build", "-o", binary}
		if raceEnabled {
			args = append(args, "-race")
		}
		if o := os.Getenv(mutation.OverlayEnv); o != "" { // under a mutant: build the mutated code
			args = append(args, "-overlay", o)
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

// goTool returns the go command that runs this test: go test puts its
// own GOROOT/bin first on the test's PATH.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

var (
	doorOnce sync.Once
	door     string
	doorErr  string
)

// Door returns the path of a freshly built, static checkfu-door binary
// (cmd/checkfu-door, CGO_ENABLED=0, never -race: it is copied into
// sandboxes, containers included), shared by every test in the process
// and removed by [Run].
func Door(t testing.TB) string {
	t.Helper()
	if !running {
		t.Fatal("clitest: call clitest.Run from TestMain so the built binary is removed: func TestMain(m *testing.M) { os.Exit(clitest.Run(m)) }")
	}
	doorOnce.Do(func() {
		d, err := os.MkdirTemp("", "checkfu-door-")
		if err != nil {
			doorErr = err.Error()
			return
		}
		doorDir = d
		door = filepath.Join(d, "checkfu-door")
		args := []string{"build", "-o", door}
		if o := os.Getenv(mutation.OverlayEnv); o != "" { // under a mutant: build the mutated code
			args = append(args, "-overlay", o)
		}
		cmd := exec.Command(goTool(), append(args, "github.com/checkfu/checkfu/cmd/checkfu-door")...)
		cmd.Dir = moduleRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			doorErr = "go build: " + err.Error() + "\n" + string(out)
		}
	})
	if doorErr != "" {
		t.Fatal(doorErr)
	}
	return door
}

// moduleRoot finds the directory holding go.mod above this file's package.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
