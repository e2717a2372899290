package sqllog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu/eventlog"
)

// headAt returns a head function for Wait that reports seq and counts
// its calls.
func headAt(seq uint64, calls *int) func(context.Context, string) (eventlog.Head, error) {
	return func(context.Context, string) (eventlog.Head, error) {
		*calls++
		return eventlog.Head{Seq: seq}, nil
	}
}

// TestWaitReturnsAtSeq: Wait returns nil once the head has reached seq,
// and never before: with the head one short it returns only ctx's error.
func TestWaitReturnsAtSeq(t *testing.T) {
	var c Changes
	var calls int
	if err := Wait(context.Background(), &c, time.Hour, headAt(5, &calls), "s", 5); err != nil {
		t.Fatalf("Wait(5) with the head at 5 = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, &c, time.Hour, headAt(4, &calls), "s", 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait(5) with the head at 4 and ctx canceled = %v, want context.Canceled", err)
	}
}

// TestWaitReturnsHeadError: a failure to read the head ends Wait with
// that failure.
func TestWaitReturnsHeadError(t *testing.T) {
	boom := &eventlog.StoreError{Op: "head", Err: errors.New("boom")}
	err := Wait(context.Background(), new(Changes), time.Hour, func(context.Context, string) (eventlog.Head, error) {
		return eventlog.Head{}, boom
	}, "s", 1)
	if err != boom {
		t.Fatalf("Wait = %v, want %v", err, boom)
	}
}

// TestChangesZeroValue: the zero Changes hands out a channel that the
// next Notify closes, and a fresh one after it.
func TestChangesZeroValue(t *testing.T) {
	var c Changes
	first := c.C()
	if c.C() != first {
		t.Fatal("C changed without a Notify")
	}
	c.Notify()
	select {
	case <-first:
	default:
		t.Fatal("Notify did not close the channel C returned")
	}
	select {
	case <-c.C():
		t.Fatal("the channel after Notify is already closed")
	default:
	}
}

// TestNotifyWakesWait: a Notify made while Wait reads the head wakes it
// to read the head again at once; the poll interval (an hour) never
// fires.
func TestNotifyWakesWait(t *testing.T) {
	var c Changes
	reading := make(chan struct{}) // Wait is in head, which waits for release
	release := make(chan uint64)   // the seq head returns
	done := make(chan error, 1)
	go func() {
		done <- Wait(context.Background(), &c, time.Hour, func(context.Context, string) (eventlog.Head, error) {
			reading <- struct{}{}
			return eventlog.Head{Seq: <-release}, nil
		}, "s", 1)
	}()
	<-reading // Wait has taken its channel
	c.Notify()
	release <- 0
	select {
	case <-reading: // read again: the Notify woke it
	case err := <-done:
		t.Fatalf("Wait returned %v with the head at 0, before seq 1", err)
	}
	release <- 1
	if err := <-done; err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
}
