package vendorkit

import "time"

// ControlTimeout bounds each request that controls a live process
// (Kill, stdin, the end of a session, its exit code): the longest the
// adapter waits for its answer, headers and body. Where the workload can
// answer for the process (E2B's envd and Daytona's daemon run inside the
// sandbox), a hostile one could otherwise hold Kill, and with it
// Destroy, for ever.
const ControlTimeout = 10 * time.Second

// An Exit is the end of a vendor process: the exit status and error
// Wait returns, published once. Make one with [NewExit]; end it with
// [Slot.Reap].
type Exit struct {
	done   chan struct{} // closed by end
	status int           // set before done closes
	err    error         // set before done closes
}

// NewExit returns an Exit that has not ended.
func NewExit() *Exit { return &Exit{done: make(chan struct{})} }

// Done is closed when the process has been reaped.
func (e *Exit) Done() <-chan struct{} { return e.done }

// Ended reports whether the process has been reaped.
func (e *Exit) Ended() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to be reaped and returns its exit status
// and error; the status is -1 whenever the error is not nil.
func (e *Exit) Wait() (int, error) {
	<-e.done
	return e.status, e.err
}

// end publishes status and err; it must be called once.
func (e *Exit) end(status int, err error) {
	if err != nil {
		status = -1
	}
	e.status, e.err = status, err
	close(e.done)
}
