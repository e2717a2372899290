package vendorkit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

type proc struct{ n, kills int }

func (p *proc) Kill() error { p.kills++; return errors.New("proc: kill failed") }

func TestSlot(t *testing.T) {
	var s vendorkit.Slot[*proc]
	made := 0
	mk := func() *proc { made++; return &proc{n: made} }
	p1, err := s.Open("acme", "inst-1", mk)
	if err != nil || p1 == nil {
		t.Fatalf("Open = %v, %v", p1, err)
	}
	if p, err := s.Open("acme", "inst-1", mk); !errors.Is(err, wire.CodeProcessAlreadyOpen) || p != nil || made != 1 ||
		!strings.Contains(err.Error(), `acme: sandbox "inst-1"'s process has not been reaped`) {
		t.Fatalf("a second Open = %v, %v (made %d)", p, err, made)
	}
	s.Release(&proc{n: 99}) // not the live one: no effect
	if _, err := s.Open("acme", "inst-1", mk); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Fatalf("Release of another process emptied the slot: %v", err)
	}
	s.Release(p1)
	p2, err := s.Open("acme", "inst-1", mk)
	if err != nil || p2 == p1 {
		t.Fatalf("Open after Release = %v, %v", p2, err)
	}
	removes := 0
	remove := func() error { removes++; return nil }
	if err := s.Destroy(context.Background(), remove); err != nil || p2.kills != 1 || p1.kills != 0 || removes != 1 {
		t.Fatalf("Destroy = %v; kills: live %d, released %d; removes %d; want nil, 1, 0, 1", err, p2.kills, p1.kills, removes)
	}
	if err := s.Destroy(context.Background(), remove); err != nil || p2.kills != 1 || removes != 1 {
		t.Fatalf("a second Destroy = %v, killed %d times, removed %d times; want nil, once, once", err, p2.kills, removes)
	}
	s.Release(p2)
	if p, err := s.Open("acme", "inst-1", mk); !errors.Is(err, adapters.CodeInstanceDestroyed) || p != nil ||
		!strings.Contains(err.Error(), `acme: sandbox "inst-1" was destroyed`) {
		t.Fatalf("Open after Destroy = %v, %v", p, err)
	}
}

// TestSlotDestroyEmpty: destroying a slot that holds no process kills
// nothing (a nil process is never called).
func TestSlotDestroyEmpty(t *testing.T) {
	var s vendorkit.Slot[*proc]
	removed := false
	if err := s.Destroy(context.Background(), func() error { removed = true; return nil }); err != nil || !removed {
		t.Fatalf("Destroy of an empty slot = %v, removed %v; want nil, true", err, removed)
	}
}

// TestSlotDestroyRetriesAFailedRemove: a Destroy whose removal failed
// (the vendor answered 500, the context ended) leaves the sandbox to be
// removed by the next Destroy, which asks again; the live process is
// killed once, and once a removal has succeeded no Destroy asks again.
func TestSlotDestroyRetriesAFailedRemove(t *testing.T) {
	var s vendorkit.Slot[*proc]
	p, err := s.Open("acme", "inst-1", func() *proc { return &proc{} })
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("acme: DELETE answered 500")
	removes := 0
	remove := func() error {
		removes++
		if removes < 3 {
			return failed
		}
		return nil
	}
	for i, want := range []error{failed, failed, nil, nil} {
		if err := s.Destroy(context.Background(), remove); !errors.Is(err, want) && err != want {
			t.Fatalf("Destroy %d = %v, want %v", i+1, err, want)
		}
	}
	if removes != 3 || p.kills != 1 {
		t.Fatalf("removed %d times, killed %d times; want 3 (two failures, one success), once", removes, p.kills)
	}
	if _, err := s.Open("acme", "inst-1", func() *proc { return &proc{} }); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Fatalf("Open after a failed Destroy = %v, want %s", err, adapters.CodeInstanceDestroyed)
	}
}

// TestSlotDestroyWaitsNoLongerThanItsContext: a Destroy that finds
// another's removal running (a vendor that does not answer) waits for it
// only as long as its own context, and then returns the context's error
// without asking the vendor; once the removal is released, a Destroy
// still finds the sandbox removed.
func TestSlotDestroyWaitsNoLongerThanItsContext(t *testing.T) {
	var s vendorkit.Slot[*proc]
	release, started := make(chan struct{}), make(chan struct{})
	removes := 0
	first := make(chan error, 1)
	go func() {
		first <- s.Destroy(context.Background(), func() error { removes++; close(started); <-release; return nil })
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	second := make(chan error, 1)
	go func() {
		second <- s.Destroy(ctx, func() error { t.Error("a second removal ran beside the first"); return nil })
	}()
	waited := false
	select {
	case err := <-second:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a Destroy waiting past its context = %v, want %v", err, context.DeadlineExceeded)
		}
	case <-time.After(5 * time.Second):
		t.Error("a Destroy waited for another's removal past its own context")
		waited = true
	}
	close(release)
	if err := <-first; err != nil || removes != 1 {
		t.Fatalf("the first Destroy = %v after %d removals; want nil after one", err, removes)
	}
	if waited {
		<-second
	}
	if err := s.Destroy(context.Background(), func() error { t.Error("removed again"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestSlotDestroysAtOnceRemoveOnce: Destroys racing each other remove
// the sandbox once, never twice at the same time.
func TestSlotDestroysAtOnceRemoveOnce(t *testing.T) {
	var s vendorkit.Slot[*proc]
	var mu sync.Mutex
	removes, inside := 0, 0
	remove := func() error {
		mu.Lock()
		removes++
		inside++
		if inside > 1 {
			t.Error("two removals at once")
		}
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		inside--
		mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := s.Destroy(context.Background(), remove); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if removes != 1 {
		t.Fatalf("removed %d times, want once", removes)
	}
}

// releasingProc releases itself when killed, as a vendor's process
// does when its stream ends at once; Destroy must not hold the slot's
// lock while it kills.
type releasingProc struct {
	s      *vendorkit.Slot[*releasingProc]
	killed bool
}

func (p *releasingProc) Kill() error { p.killed = true; p.s.Release(p); return nil }

func TestSlotDestroyKillsOutsideTheLock(t *testing.T) {
	var s vendorkit.Slot[*releasingProc]
	p, err := s.Open("acme", "inst-1", func() *releasingProc { return &releasingProc{s: &s} })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(context.Background(), func() error { return nil }); err != nil || !p.killed {
		t.Fatalf("Destroy did not kill the live process")
	}
}

func TestReap(t *testing.T) {
	var s vendorkit.Slot[*proc]
	mk := func() *proc { return &proc{} }
	for _, c := range []struct {
		status     int
		err        error
		wantStatus int
	}{
		{0, nil, 0},
		{137, nil, 137},
		{7, errors.New("acme: the stream was cut"), -1},
		{-1, errors.New("acme: no exit status"), -1},
	} {
		p, err := s.Open("acme", "inst-1", mk)
		if err != nil {
			t.Fatalf("Open = %v", err)
		}
		e := vendorkit.NewExit()
		if e.Ended() {
			t.Fatal("a new Exit has ended")
		}
		s.Reap(p, e, c.status, c.err)
		if !e.Ended() {
			t.Fatal("Reap did not end the Exit")
		}
		select {
		case <-e.Done():
		default:
			t.Fatal("Done is open after Reap")
		}
		if status, err := e.Wait(); status != c.wantStatus || err != c.err {
			t.Errorf("Reap(%d, %v): Wait = %d, %v; want %d, %v", c.status, c.err, status, err, c.wantStatus, c.err)
		}
		// Reap released the process before it ended the Exit: the
		// loop's next Open must find the slot empty.
	}
}

// TestReapReleasesBeforeWaitReturns: once Wait returns, the sandbox
// takes its next process, with no window in which it is still busy.
func TestReapReleasesBeforeWaitReturns(t *testing.T) {
	var s vendorkit.Slot[*proc]
	p, err := s.Open("acme", "inst-1", func() *proc { return &proc{} })
	if err != nil {
		t.Fatal(err)
	}
	e := vendorkit.NewExit()
	go s.Reap(p, e, 0, nil)
	if _, err := e.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open("acme", "inst-1", func() *proc { return &proc{} }); err != nil {
		t.Fatalf("Open right after Wait = %v", err)
	}
}
