//go:build linux

package jail_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMain(m *testing.M) {
	fakeStageMain()
	initOffTheFirstThread()
	adaptertest.ProbeMain()
	escapeMain()
	parentMain()
	terminalRunnerMain()
	code := runBothInitStages(m)
	if initDir != "" {
		os.RemoveAll(initDir)
	}
	os.Exit(code)
}

// initOffTheFirstThread runs jail.InitMain (which returns at once unless
// this binary was started as a jail's init stage) on a thread other than
// the process's first, always. A host binary may call InitMain from any
// goroutine, on any thread, and only the first thread holds the
// parent-death signal the provider asks for at the clone: the stage
// must arm its own thread before the exec keeps only that one
// (TestParentDeathEndsTheJail fails every time otherwise).
func initOffTheFirstThread() {
	if len(os.Args) < 2 || os.Args[1] != jail.InitArg {
		return
	}
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		jail.InitMain() // already off the first thread
		return
	}
	// This goroutine holds the first thread, so another runs elsewhere.
	go jail.InitMain()
	select {}
}

// runBothInitStages runs the tests on both init stages: first the test
// binary re-executed ([jail.InitMain]), then, when a test made a jail
// provider, again with the checkfu-jail-init program built from this
// tree (under a mutant, with the mutant), so that every jail, escape and
// mutant test holds on both. Benchmarks run in the first pass only: they
// measure both stages side by side.
func runBothInitStages(m *testing.M) int {
	if os.Getenv(jail.InitProgramTestEnv) != "" {
		return m.Run() // a child of a test, or a pass chosen by hand
	}
	code := m.Run()
	if !jail.MadeProvider.Load() || flag.Lookup("test.run").Value.String() == "^$" {
		return code // no test made a jail (benchmarks measure both stages themselves)
	}
	prog, err := initProgram()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv(jail.InitProgramTestEnv, prog)
	flag.Set("test.bench", "")
	fmt.Println("jail_test: second pass: the init stage is the checkfu-jail-init program")
	if c := m.Run(); code == 0 {
		code = c
	}
	return code
}

// buildInitProgram builds cmd/checkfu-jail-init into dir, static, with
// the mutant's overlay when a mutant runs.
func buildInitProgram(dir string) (string, error) {
	prog := filepath.Join(dir, "checkfu-jail-init")
	args := []string{"build", "-o", prog}
	if o := os.Getenv(mutation.OverlayEnv); o != "" {
		args = append(args, "-overlay", o)
	}
	cmd := exec.Command(goTool(), append(args, "github.com/checkfu/checkfu/adapters/jail/cmd/checkfu-jail-init")...)
	_, file, _, _ := runtime.Caller(0)
	cmd.Dir = filepath.Dir(file)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build checkfu-jail-init: %v\n%s", err, out)
	}
	return prog, nil
}

// goTool is the go command that runs this test: go test puts its own
// GOROOT/bin first on the test's PATH.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

var (
	initOnce sync.Once
	initDir  string // removed by TestMain
	initProg string
	initErr  error
)

// initProgram returns the checkfu-jail-init program built from this
// tree, once per test process.
func initProgram() (string, error) {
	initOnce.Do(func() {
		if initDir, initErr = os.MkdirTemp("", "checkfu-jail-init-"); initErr == nil {
			initProg, initErr = buildInitProgram(initDir)
		}
	})
	return initProg, initErr
}

// mustInitProgram is initProgram, failing t when it cannot be built.
func mustInitProgram(t testing.TB) string {
	t.Helper()
	p, err := initProgram()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// probePath is where the test binary is bound in every jail the tests
// make, so it can act as the probe inside.
const probePath = jail.BindRoot + "/probe"

// newProvider returns a provider whose jails hold the test binary at
// probePath, on the init stage of this pass of the tests (cfg's own
// InitProgram, when set, wins). Without the kernel's support it fails
// under CI=true and skips otherwise, saying what the kernel lacks.
func newProvider(t testing.TB, cfg jail.Config) *jail.Provider {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg = jail.ConfigForTest(cfg)
	if _, ok := t.(*testing.T); ok { // a failure says which init stage it ran on
		if cfg.InitProgram != "" {
			t.Logf("init stage: the program %s", cfg.InitProgram)
		} else {
			t.Log("init stage: the test binary re-executed")
		}
	}
	cfg.Binds = append(cfg.Binds, jail.Bind{Source: exe, Target: probePath})
	p, err := jail.New(cfg)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("jail.New: %v (CI must run the jail)", err)
		}
		t.Skipf("jail.New: %v", err)
	}
	return p
}
