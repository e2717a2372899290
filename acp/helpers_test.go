package acp_test

import (
	"io"
	"sync"
	"time"
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
