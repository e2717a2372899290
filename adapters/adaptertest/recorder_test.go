package adaptertest

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A recorder is a tester that records failures instead of reporting
// them, so the suite can run against a broken provider inside a passing
// test. It embeds the outer test only for TempDir, Context and the like.
type recorder struct {
	testing.TB
	name string
	log  *recordLog

	mu       sync.Mutex // guards failed, skipped, lines and cleanups
	failed   bool
	skipped  bool
	lines    []string
	cleanups []func()
}

// A recordLog collects, across a recorded run, each failed subtest's
// name and lines.
type recordLog struct {
	mu     sync.Mutex
	failed []string
	lines  []string
}

func newRecorder(outer testing.TB) *recorder {
	return &recorder{TB: outer, name: "suite", log: &recordLog{}}
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Log(args ...any) {
	r.mu.Lock()
	r.lines = append(r.lines, fmt.Sprint(args...))
	r.mu.Unlock()
}
func (r *recorder) Logf(format string, args ...any) { r.Log(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
func (r *recorder) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *recorder) Error(args ...any)                 { r.Log(args...); r.Fail() }
func (r *recorder) Errorf(format string, args ...any) { r.Logf(format, args...); r.Fail() }
func (r *recorder) Fatal(args ...any)                 { r.Log(args...); r.FailNow() }
func (r *recorder) Fatalf(format string, args ...any) { r.Logf(format, args...); r.FailNow() }
func (r *recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any)                 { r.Log(args...); r.SkipNow() }
func (r *recorder) Skipf(format string, args ...any) { r.Logf(format, args...); r.SkipNow() }
func (r *recorder) Skipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}
func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}
func (r *recorder) real() *testing.T { return nil }

// run runs f as a subtest on its own goroutine (so FailNow and SkipNow
// end only it), then its cleanups in reverse order.
func (r *recorder) run(name string, f func(tester)) {
	c := &recorder{TB: r.TB, name: r.name + "/" + name, log: r.log}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			c.mu.Lock()
			cl := slices.Clone(c.cleanups)
			c.mu.Unlock()
			for i := len(cl) - 1; i >= 0; i-- {
				cl[i]()
			}
		}()
		f(c)
	}()
	<-done
	if c.Failed() {
		r.Fail()
		r.log.mu.Lock()
		r.log.failed = append(r.log.failed, c.name)
		for _, l := range c.lines {
			r.log.lines = append(r.log.lines, c.name+": "+l)
		}
		r.log.mu.Unlock()
	}
}

// failedSubtests returns the names of the failed subtests, suite prefix
// removed.
func (l *recordLog) failedSubtests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.failed))
	for i, n := range l.failed {
		out[i] = strings.TrimPrefix(n, "suite/run/")
	}
	return out
}
