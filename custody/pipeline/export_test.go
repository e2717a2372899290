package pipeline

import (
	"sync/atomic"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// CountLookups makes every registry lookup of p's calls count in n. It
// is called before the first call.
func CountLookups(p *Pipeline, n *atomic.Int64) {
	p.registry = countingFinder{f: p.registry, n: n}
}

// countingFinder counts the lookups through f.
type countingFinder struct {
	f finder
	n *atomic.Int64
}

func (c countingFinder) Find(capability string) (authz.Entry, bool) {
	c.n.Add(1)
	return c.f.Find(capability)
}

// ModelUsed returns what the session's model budget of capability has
// spent (the zero Budget before its first call).
func ModelUsed(p *Pipeline, session, capability string) modelroute.Budget {
	p.mu.Lock()
	m := p.budgets[budgetKey{session, capability}]
	p.mu.Unlock()
	if m == nil {
		return modelroute.Budget{}
	}
	return m.Used()
}
