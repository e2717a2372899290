package acp_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/checkfu/checkfu/acp"
)

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// watchdog bounds a test that would otherwise hang on a bug; it is never
// an assertion about speed.
const watchdog = 2 * time.Minute

// hangWatchdog bounds a wait for something the client does at once (a
// line it writes, a call that must return, a Close): far above any run of
// a correct client on a loaded machine, short enough that a mutant making
// it hang fails the test within the mutation harness's time.
const hangWatchdog = 30 * time.Second

// openSessions starts n concurrent session/new calls on c, call i with
// cwd "/w/i", and returns a channel that receives one result per call:
// nil when the call got its own session id "for /w/i" (what these tests'
// agents answer), an error otherwise.
func openSessions(c *acp.Client, n int) <-chan error {
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cwd := fmt.Sprintf("/w/%d", i)
			s, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: cwd})
			if err == nil && s.SessionID != "for "+cwd {
				err = fmt.Errorf("session/new for %s got %q", cwd, s.SessionID)
			}
			errs <- err
		}()
	}
	return errs
}
