package vendorkit

import (
	"context"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
)

// A Killer is a vendor process as its sandbox's [Slot] holds it.
type Killer interface {
	comparable
	// Kill ends the process. The slot calls it outside its lock, so
	// Kill may release the process itself.
	Kill() error
}

// A Slot is a sandbox's one live process and whether the sandbox was
// destroyed. The zero Slot is empty and not destroyed.
type Slot[P Killer] struct {
	mu        sync.Mutex // guards live, destroyed and removing
	live      P
	destroyed bool
	// removing holds a token while a Destroy removes the sandbox; made
	// by the first Destroy.
	removing chan struct{}
	removed  bool // read and written only by the token's holder
}

// Open makes the sandbox's process with mk, called under the slot's
// lock, and holds it as the live one. A destroyed sandbox is refused with
// adapters.CodeInstanceDestroyed, and a sandbox whose process has not
// been released with wire.CodeProcessAlreadyOpen; vendor prefixes the
// error and id names the sandbox in it.
func (s *Slot[P]) Open(vendor, id string, mk func() P) (P, error) {
	var zero P
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.destroyed:
		return zero, checkfu.Refuse(adapters.CodeInstanceDestroyed, "%s: sandbox %s was destroyed", vendor, checkfu.Quote(id))
	case s.live != zero:
		return zero, checkfu.Refuse(wire.CodeProcessAlreadyOpen, "%s: sandbox %s's process has not been reaped", vendor, checkfu.Quote(id))
	}
	s.live = mk()
	return s.live, nil
}

// Release empties the slot if p is its live process.
func (s *Slot[P]) Release(p P) {
	var zero P
	s.mu.Lock()
	if s.live == p {
		s.live = zero
	}
	s.mu.Unlock()
}

// Reap releases p and then ends e with status and err (status -1
// whenever err is not nil). The order is the point: once a Wait on e
// returns, the sandbox can open its next process.
func (s *Slot[P]) Reap(p P, e *Exit, status int, err error) {
	s.Release(p)
	e.end(status, err)
}

// Destroy marks the sandbox destroyed, kills its live process on the
// first call if it has one (outside the lock, ignoring Kill's error), and
// then removes the sandbox at the vendor with remove, returning its
// error. remove runs until it succeeds once: a Destroy after a failed
// one (a vendor that answered 500, a context that ended) tries again,
// so a sandbox is never left running because one request failed, and
// a Destroy after a successful one does nothing and returns nil.
// Destroys are serialized, so remove never runs twice at once; a Destroy
// waiting for another's removal gives up when ctx, the context remove
// runs under, ends, and returns its error.
func (s *Slot[P]) Destroy(ctx context.Context, remove func() error) error {
	var zero P
	s.mu.Lock()
	kill := !s.destroyed // the first Destroy kills
	s.destroyed = true
	live := s.live
	if s.removing == nil {
		s.removing = make(chan struct{}, 1)
	}
	removing := s.removing
	s.mu.Unlock()
	if kill && live != zero {
		_ = live.Kill()
	}
	select {
	case removing <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-removing }()
	if s.removed {
		return nil
	}
	if err := remove(); err != nil {
		return err
	}
	s.removed = true
	return nil
}
