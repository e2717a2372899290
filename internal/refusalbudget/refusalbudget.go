package refusalbudget

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrSpent is returned by [Budget.Pace] once the budget is spent.
var ErrSpent = errors.New("refusalbudget: the refusal budget is spent")

// A Budget is a refusal total and rate. It is safe for concurrent use.
type Budget struct {
	max       int
	perSecond float64
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex // guards the fields below
	spent  int
	tokens float64
	at     time.Time // when tokens was last brought up to date
	done   chan struct{}
}

// New returns a full Budget of max refusals, paced at perSecond a second
// after a burst of perSecond. Both must be positive.
func New(max, perSecond int) *Budget {
	return &Budget{max: max, perSecond: float64(perSecond), now: time.Now, sleep: sleepCtx,
		tokens: float64(perSecond), done: make(chan struct{})}
}

// SetClock replaces the clock and the wait of b, for tests that drive
// time themselves. It must be called before b is used.
func (b *Budget) SetClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	b.now, b.sleep = now, sleep
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refill brings tokens up to date. The caller holds mu.
func (b *Budget) refill() {
	now := b.now()
	if !b.at.IsZero() {
		b.tokens = min(b.perSecond, b.tokens+now.Sub(b.at).Seconds()*b.perSecond)
	}
	b.at = now
}

// Pace waits until the rate allows one more refusal. It returns ctx's
// error if ctx ends first, and [ErrSpent] if the budget is spent.
func (b *Budget) Pace(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.spent >= b.max {
			b.mu.Unlock()
			return ErrSpent
		}
		b.refill()
		wait := time.Duration((1 - b.tokens) / b.perSecond * float64(time.Second))
		b.mu.Unlock()
		if wait <= 0 {
			return nil
		}
		if err := b.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// Spend counts one refusal. ok is false when the budget was already
// spent (nothing is counted); last is true for the refusal that spends
// it, after which [Budget.Done] is closed. The caller records the
// refusal when ok, and the budget's end when last.
func (b *Budget) Spend() (ok, last bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent >= b.max {
		return false, false
	}
	b.refill()
	b.tokens--
	b.spent++
	if b.spent == b.max {
		close(b.done)
		return true, true
	}
	return true, false
}

// Exhausted reports whether the budget is spent.
func (b *Budget) Exhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent >= b.max
}

// Done returns a channel closed when the budget is spent.
func (b *Budget) Done() <-chan struct{} { return b.done }
