package adapters

import (
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
)

// A Slot is an instance's reservation of its one live process, for
// adapter authors to embed. The zero Slot is free. It is safe for
// concurrent use.
type Slot struct {
	mu        sync.Mutex // guards held and destroyed
	held      bool
	destroyed bool
}

// Acquire takes the reservation. It refuses with acp/wire's
// process_already_open while it is held, and with
// [CodeInstanceDestroyed] after Destroy.
func (s *Slot) Acquire() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return checkfu.Refuse(CodeInstanceDestroyed, "adapters: the instance was destroyed")
	}
	if s.held {
		return checkfu.Refuse(wire.CodeProcessAlreadyOpen, "adapters: the instance's process has not been reaped")
	}
	s.held = true
	return nil
}

// Release ends the reservation. Call it once the process is reaped
// (Wait has returned), never earlier.
func (s *Slot) Release() {
	s.mu.Lock()
	s.held = false
	s.mu.Unlock()
}

// Destroy marks the slot destroyed, so that every later Acquire is
// refused, and reports whether it was the first call.
func (s *Slot) Destroy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.destroyed
	s.destroyed = true
	return first
}
