package vendorkit

import (
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
)

// A Slot is a sandbox's one live process and whether the sandbox was
// destroyed. The zero Slot is empty and not destroyed.
type Slot[P comparable] struct {
	mu        sync.Mutex // guards live and destroyed
	live      P
	destroyed bool
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

// Destroy marks the sandbox destroyed. It reports whether this was the
// first call, and the live process then (the caller kills it).
func (s *Slot[P]) Destroy() (first bool, live P) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first = !s.destroyed
	s.destroyed = true
	return first, s.live
}
