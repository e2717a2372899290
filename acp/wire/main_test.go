package wire

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/checkfu/checkfu/internal/mutation"
)

// hangLimit is how long one pass over this package's tests may run.
// Every test here finishes in seconds (the whole package takes about 3 s
// under -race), so a pass still running after two minutes is a hang.
const hangLimit = 2 * time.Minute

// TestMain turns a hang into a failure within hangLimit (times -count)
// instead of at go test's -timeout (40 minutes in CI). A broken credit,
// journal or resume check most often shows as a wait that never ends, not
// as a wrong byte; the panic prints every goroutine's stack, which shows
// the wait. Fuzzing and benchmarks run as long as they are told to, so
// the watchdog stays off for them.
func TestMain(m *testing.M) {
	if path := os.Getenv(strangerEnv); path != "" {
		os.Exit(strangerOpens(path))
	}
	flag.Parse()
	// The mutation harness (CHECKFU_MUTANTS=1) builds and runs the tests
	// once per mutant, for minutes; each mutant's run (CHECKFU_MUTANTS=0)
	// has its own watchdog.
	if set("test.fuzz") || set("test.bench") || mutation.Enabled() {
		os.Exit(m.Run())
	}
	passes := 1
	if f := flag.Lookup("test.count"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 1 {
			passes = n
		}
	}
	limit := hangLimit * time.Duration(passes)
	watchdog := time.AfterFunc(limit, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("acp/wire: tests still running after %v: a hang (a wait that a broken check never ends); every goroutine's stack follows", limit))
	})
	code := m.Run()
	watchdog.Stop()
	os.Exit(code)
}

// set reports whether the named test flag has a non-empty value.
func set(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != ""
}
