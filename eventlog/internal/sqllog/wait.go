package sqllog

import (
	"context"
	"sync"
	"time"

	"github.com/checkfu/checkfu/eventlog"
)

// Changes wakes the followers of a store handle when a commit lands. The
// zero Changes is ready to use; it must not be copied after first use.
type Changes struct {
	mu      sync.Mutex
	changed chan struct{} // guarded by mu; closed and replaced by Notify
}

// Notify wakes every follower waiting on a channel from C.
func (c *Changes) Notify() {
	c.mu.Lock()
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// C returns a channel that the next Notify closes.
func (c *Changes) C() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// Wait implements eventlog.Store.Wait: it returns once head reports a
// seq >= seq for session, re-reading the head after every Notify of
// changes and every poll, or ctx's error when ctx ends first.
func Wait(ctx context.Context, changes *Changes, poll time.Duration, head func(context.Context, string) (eventlog.Head, error), session string, seq uint64) error {
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		changed := changes.C()
		h, err := head(ctx, session)
		if err != nil {
			return err
		}
		if h.Seq >= seq {
			return nil
		}
		select {
		case <-changed:
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
