package custodytest

import (
	"context"
	"slices"
	"sync"

	"github.com/checkfu/checkfu/custody/authz"
)

// MemoryEvidence is an in-memory EvidenceSink, safe for concurrent use.
// Its zero value is ready to use. Events recorded through it are whatever
// label the caller gave them; a test double should record LabelMock.
type MemoryEvidence struct {
	mu     sync.Mutex
	events []authz.Evidence // guarded by mu
}

var _ authz.EvidenceSink = (*MemoryEvidence)(nil)

// Record appends ev.
func (m *MemoryEvidence) Record(ctx context.Context, ev authz.Evidence) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, ev)
	return nil
}

// Events returns a copy of the recorded events in order.
func (m *MemoryEvidence) Events() []authz.Evidence {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.events)
}
