package adaptertest

import "testing"

// A tester is what the suite runs on: a testing.TB that can run named
// subtests. *testing.T is one (through realT); the package's own tests
// use a recording one, so that the suite can be run against a broken
// provider without failing the outer test.
type tester interface {
	testing.TB
	run(name string, f func(tester))
	// real returns the underlying *testing.T, or nil when recording.
	real() *testing.T
}

type realT struct{ *testing.T }

func (r realT) run(name string, f func(tester)) {
	r.T.Run(name, func(t *testing.T) { f(realT{t}) })
}

func (r realT) real() *testing.T { return r.T }
