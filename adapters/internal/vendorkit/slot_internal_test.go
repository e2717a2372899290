package vendorkit

import (
	"testing"
	"time"
)

type idle struct{}

func (*idle) Kill() error { return nil }

// TestReapReleasesFirst: while the slot's lock is held, Reap cannot
// release, so it must not have ended the Exit either. Correct code never
// ends it here, whatever the timing; the wait only gives a Reap that
// ends first the time to show it.
func TestReapReleasesFirst(t *testing.T) {
	var s Slot[*idle]
	p, err := s.Open("acme", "inst-1", func() *idle { return &idle{} })
	if err != nil {
		t.Fatal(err)
	}
	e := NewExit()
	s.mu.Lock()
	go s.Reap(p, e, 0, nil)
	select {
	case <-e.Done():
		s.mu.Unlock()
		t.Fatal("Reap ended the Exit before it released the process")
	case <-time.After(50 * time.Millisecond):
	}
	s.mu.Unlock()
	if _, err := e.Wait(); err != nil {
		t.Fatal(err)
	}
}
