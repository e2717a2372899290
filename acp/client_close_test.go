package acp_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp"
)

// stuckInput is the input of an agent that never reads it: every Write
// blocks until Close, as a full pipe does, and then fails.
type stuckInput struct {
	entered chan struct{} // closed when the first Write has started
	once    sync.Once
	closeMu sync.Once
	closed  chan struct{}
}

func newStuckInput() *stuckInput {
	return &stuckInput{entered: make(chan struct{}), closed: make(chan struct{})}
}

func (s *stuckInput) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.closed
	return 0, io.ErrClosedPipe
}

func (s *stuckInput) Close() error {
	s.closeMu.Do(func() { close(s.closed) })
	return nil
}

// An agent that stops reading its input must not be able to make Close
// hang: Close is how a Runner shuts such an agent down.
func TestCloseUnblocksAWriteTheAgentNeverReads(t *testing.T) {
	out, outW := io.Pipe()
	t.Cleanup(func() { outW.Close() })
	in := newStuckInput()
	t.Cleanup(func() { in.Close() })
	c := acp.NewClient(out, in, acp.Config{})

	initErr := make(chan error, 1)
	go func() {
		_, err := c.Initialize(context.Background())
		initErr <- err
	}()
	<-in.entered // the initialize line is being written and never will be

	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(hangWatchdog):
		t.Fatal("Close hung behind a write the agent never reads")
	}
	select {
	case err := <-initErr:
		if err == nil {
			t.Fatal("Initialize succeeded over a closed input")
		}
	case <-time.After(hangWatchdog):
		t.Fatal("Initialize hung after Close")
	}
	if err := c.Cancel("s"); err == nil {
		t.Fatalf("a write after Close = %v, want an error", err)
	}
}

// A call whose request line the agent never reads returns when its ctx
// ends; the half-written line leaves the input unusable, so the client
// ends too.
func TestCallReturnsWhenItsContextEndsDuringAStuckWrite(t *testing.T) {
	out, outW := io.Pipe()
	t.Cleanup(func() { outW.Close() })
	in := newStuckInput()
	t.Cleanup(func() { in.Close() })
	c := acp.NewClient(out, in, acp.Config{})
	t.Cleanup(func() { c.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	initErr := make(chan error, 1)
	go func() {
		_, err := c.Initialize(ctx)
		initErr <- err
	}()
	<-in.entered
	cancel()
	select {
	case err := <-initErr:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Initialize = %v, want context.Canceled", err)
		}
	case <-time.After(hangWatchdog):
		t.Fatal("Initialize ignored its context behind a write the agent never reads")
	}
	select {
	case <-c.Done():
	case <-time.After(watchdog):
		t.Fatal("the client still runs over an input holding a partial line")
	}
	if !errors.Is(c.Err(), acp.CodeClientClosed) {
		t.Fatalf("Err() = %v, want client_closed", c.Err())
	}
}
