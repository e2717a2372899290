package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// answeringInput is the input of an agent that answers its pending
// call when its input closes, as an agent cut short ends its turn with
// "cancelled": Close writes that answer to the agent's output and
// returns only once the client has read a line after it, so the answer
// was dispatched while Close ran.
type answeringInput struct {
	out     *io.PipeWriter       // the agent's output, the client's input
	id      chan json.RawMessage // the pending call's ID, once written
	answer  json.RawMessage      // the ID Close answers
	updated chan struct{}        // the client read the line after the answer
	once    sync.Once
}

func (a *answeringInput) Write(p []byte) (int, error) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(p, &m) == nil && m.ID != nil {
		a.id <- m.ID
	}
	return len(p), nil
}

func (a *answeringInput) Close() error {
	a.once.Do(func() {
		fmt.Fprintf(a.out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`+"\n", a.answer)
		fmt.Fprint(a.out, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}`+"\n")
		<-a.updated
	})
	return nil
}

// A call pending at Close fails with CodeClientClosed, even when the
// agent answers it in reaction to its input closing: an answer read
// after Close began is not the agent's answer to the call. (A Runner
// that closes an agent's client to end its turn relies on the turn
// failing.)
func TestClosePendingCallFailsThoughTheAgentAnswersAtEOF(t *testing.T) {
	for i := range 20 {
		out, outW := io.Pipe()
		in := &answeringInput{out: outW, id: make(chan json.RawMessage, 1), updated: make(chan struct{})}
		var once sync.Once
		c := acp.NewClient(out, in, acp.Config{OnUpdate: func(acp.SessionNotification) {
			once.Do(func() { close(in.updated) })
		}})
		initErr := make(chan error, 1)
		go func() {
			_, err := c.Initialize(context.Background())
			initErr <- err
		}()
		in.answer = <-in.id // the call is written: it is pending
		c.Close()
		select {
		case err := <-initErr:
			if !errors.Is(err, acp.CodeClientClosed) {
				outW.Close()
				t.Fatalf("round %d: Initialize pending at Close = %v, want %s", i, err, acp.CodeClientClosed)
			}
		case <-time.After(hangWatchdog):
			t.Fatal("Initialize hung after Close")
		}
		outW.Close()
	}
}
