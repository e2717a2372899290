// Package memevidence is an in-memory authz.EvidenceSink. custodytest
// re-exports it as Sink; it lives in a non-test package so that
// non-test code (the conformance matrix) uses it without importing a
// *test package.
package memevidence

import (
	"context"
	"slices"
	"sync"

	"github.com/checkfu/checkfu/custody/authz"
)

// Sink is an in-memory EvidenceSink, safe for concurrent use.
// Its zero value is ready to use. Events recorded through it are whatever
// label the caller gave them; a test double should record LabelMock.
type Sink struct {
	mu     sync.Mutex
	events []authz.Evidence // guarded by mu
}

var _ authz.EvidenceSink = (*Sink)(nil)

// Record appends ev.
func (m *Sink) Record(ctx context.Context, ev authz.Evidence) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, ev)
	return nil
}

// Events returns a copy of the recorded events in order.
func (m *Sink) Events() []authz.Evidence {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.events)
}
