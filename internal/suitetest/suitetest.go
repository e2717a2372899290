// Package suitetest lets the module's exported conformance suites
// (custodytest, eventlogtest, wiretest, egresstest, adaptertest) prove
// that they can fail: a [Recorder] is a testing.TB that records errors,
// fatals and skips without failing the test that runs it, so a suite's
// own tests can run it against a broken implementation and assert that
// it was rejected.
//
// Invariants:
//
//   - A Recorder never calls the outer test's Error, Fatal, Fail or Skip;
//     what it records is returned by [Record] and judged by the caller.
//   - Fatal, FailNow, Skip and SkipNow end the calling goroutine with
//     runtime.Goexit, as package testing does; [Record] and [Recorder.Run]
//     therefore run their function in a goroutine of their own and wait
//     for it.
//   - Cleanups run last in first out when the function (or subtest) that
//     registered them ends, whether it returned, failed or was skipped;
//     TempDir directories are removed by a cleanup.
//   - A failed subtest marks its parent failed, as with testing.T.
//
// [Run] is what a suite calls for a subtest: t.Run for a *testing.T, the
// recorder's own Run for a *Recorder, so the same suite code serves both.
package suitetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// A Recorder is a testing.TB that records what a suite reports instead
// of failing the test that runs it. Build one with [Record].
type Recorder struct {
	testing.TB // the outer test, for Setenv, Chdir, Attr and ArtifactDir

	name   string
	parent *Recorder
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	failed   bool     // guarded by mu
	skipped  bool     // guarded by mu
	errors   []string // guarded by mu: every Error and Fatal, "name: text"
	logs     []string // guarded by mu
	cleanups []func() // guarded by mu
}

// A Result is what a suite reported to a Recorder.
type Result struct {
	// Failed reports whether the suite (or any subtest) failed.
	Failed bool
	// Skipped reports whether the top level was skipped.
	Skipped bool
	// Errors are the failure messages, each prefixed by the (sub)test name.
	Errors []string
	// Logs are the Log and Skip messages.
	Logs []string
}

// String returns the errors, one per line.
func (r Result) String() string { return strings.Join(r.Errors, "\n") }

// Record runs f with a fresh Recorder named name, waits for it (and every
// subtest) to end, runs its cleanups and returns what it recorded. outer
// is used only for the methods a Recorder does not implement itself
// (Setenv, Chdir, Attr, ArtifactDir); it may be nil when f calls none.
func Record(outer testing.TB, name string, f func(t *Recorder)) Result {
	r := newRecorder(outer, name, nil)
	r.run(f)
	r.mu.Lock()
	defer r.mu.Unlock()
	return Result{Failed: r.failed, Skipped: r.skipped, Errors: append([]string(nil), r.errors...), Logs: append([]string(nil), r.logs...)}
}

func newRecorder(outer testing.TB, name string, parent *Recorder) *Recorder {
	ctx, cancel := context.WithCancel(context.Background())
	return &Recorder{TB: outer, name: name, parent: parent, ctx: ctx, cancel: cancel}
}

// run calls f in a goroutine, waits, then runs the cleanups.
func (r *Recorder) run(f func(*Recorder)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.fail(fmt.Sprintf("panic: %v", p))
			}
		}()
		f(r)
	}()
	<-done
	r.cancel()
	for {
		r.mu.Lock()
		n := len(r.cleanups)
		if n == 0 {
			r.mu.Unlock()
			return
		}
		c := r.cleanups[n-1]
		r.cleanups = r.cleanups[:n-1]
		r.mu.Unlock()
		r.protect(c)
	}
}

// protect runs c, recording a panic or a Fatal inside it.
func (r *Recorder) protect(c func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.fail(fmt.Sprintf("panic in cleanup: %v", p))
			}
		}()
		c()
	}()
	<-done
}

func (r *Recorder) fail(msg string) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	for p := r; p != nil; p = p.parent {
		p.mu.Lock()
		p.failed = true
		if msg != "" {
			p.errors = append(p.errors, r.name+": "+msg)
		}
		p.mu.Unlock()
	}
}

// Run runs f as a subtest named name in a goroutine of its own, waits
// for it, and reports whether it passed. A failure marks r failed too.
func (r *Recorder) Run(name string, f func(t *Recorder)) bool {
	sub := newRecorder(r.TB, r.name+"/"+name, r)
	sub.run(f)
	return !sub.Failed()
}

// Name returns the recorder's name, "parent/child" for subtests.
func (r *Recorder) Name() string { return r.name }

// Helper does nothing.
func (r *Recorder) Helper() {}

// Context returns a context canceled when the function ends, before
// its cleanups run.
func (r *Recorder) Context() context.Context { return r.ctx }

// Cleanup registers f to run when the function ends.
func (r *Recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// TempDir returns a new directory removed when the function ends.
func (r *Recorder) TempDir() string {
	dir, err := os.MkdirTemp("", "suitetest-")
	if err != nil {
		r.Fatalf("TempDir: %v", err)
	}
	r.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Output returns a writer whose lines are recorded as logs.
func (r *Recorder) Output() io.Writer { return logWriter{r} }

type logWriter struct{ r *Recorder }

func (w logWriter) Write(p []byte) (int, error) { w.r.Log(string(p)); return len(p), nil }

// Log records a log line.
func (r *Recorder) Log(args ...any) { r.log(fmt.Sprintln(args...)) }

// Logf records a log line.
func (r *Recorder) Logf(format string, args ...any) { r.log(fmt.Sprintf(format, args...)) }

func (r *Recorder) log(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, r.name+": "+strings.TrimSuffix(s, "\n"))
}

// Fail marks the function failed.
func (r *Recorder) Fail() { r.fail("") }

// Failed reports whether the function (or a subtest) failed.
func (r *Recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Error records a failure.
func (r *Recorder) Error(args ...any) { r.fail(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }

// FailNow marks the function failed and ends the calling goroutine.
func (r *Recorder) FailNow() {
	r.fail("")
	runtime.Goexit()
}

// Fatal records a failure and ends the calling goroutine.
func (r *Recorder) Fatal(args ...any) {
	r.Error(args...)
	runtime.Goexit()
}

// Fatalf records a failure and ends the calling goroutine.
func (r *Recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// SkipNow marks the function skipped and ends the calling goroutine.
func (r *Recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

// Skip logs args and skips.
func (r *Recorder) Skip(args ...any) { r.Log(args...); r.SkipNow() }

// Skipf logs and skips.
func (r *Recorder) Skipf(format string, args ...any) { r.Logf(format, args...); r.SkipNow() }

// Skipped reports whether the function was skipped.
func (r *Recorder) Skipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// Run runs f as a subtest of t named name, and reports whether it passed:
// through t.Run when t is a *testing.T, through [Recorder.Run] when it is
// a *Recorder, and inline (f(t)) for any other T. Suites written against
// a type parameter T with this helper accept both a *testing.T (their
// callers' code is unchanged) and a *Recorder (their own tests).
func Run[T testing.TB](t T, name string, f func(t T)) bool {
	switch p := any(t).(type) {
	case *testing.T:
		return p.Run(name, func(st *testing.T) { f(any(st).(T)) })
	case *Recorder:
		return p.Run(name, func(sr *Recorder) {
			sub, ok := any(sr).(T)
			if !ok { // T is an interface *Recorder does not satisfy: cannot happen for testing.TB
				sr.Fatalf("suitetest: %T is not a %T", sr, t)
			}
			f(sub)
		})
	default:
		f(t)
		return !t.Failed()
	}
}
