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
	max   int
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex // guards the fields below
	spent  int
	bucket bucket
	done   chan struct{}
}

// New returns a full Budget of max refusals, paced at perSecond a second
// after a burst of perSecond. Both must be positive.
func New(max, perSecond int) *Budget {
	return &Budget{max: max, now: time.Now, sleep: sleepCtx, bucket: newBucket(perSecond), done: make(chan struct{})}
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

// Pace waits until the rate allows one more refusal. It returns ctx's
// error if ctx ends first, and [ErrSpent] if the budget is spent.
func (b *Budget) Pace(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.spent >= b.max {
			b.mu.Unlock()
			return ErrSpent
		}
		wait := b.bucket.wait(b.now())
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
	b.bucket.take(b.now())
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

// A Rate lets events pass at most perSecond a second, after a burst of
// perSecond, without waiting: what it does not let pass it counts, and
// the next event it lets pass learns how many. A log written on
// refusals is paced with one. It is safe for concurrent use; a nil Rate
// lets nothing pass.
type Rate struct {
	mu     sync.Mutex // guards the fields below
	bucket bucket
	held   int64 // events refused since the last one let pass
}

// NewRate returns a full Rate of perSecond events a second, which must
// be positive.
func NewRate(perSecond int) *Rate { return &Rate{bucket: newBucket(perSecond)} }

// Allow reports whether one more event may pass at now. When it may,
// held is the number of events refused since the last one let pass, and
// that count starts again.
func (r *Rate) Allow(now time.Time) (held int64, ok bool) {
	if r == nil {
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bucket.wait(now) > 0 {
		r.held++
		return 0, false
	}
	r.bucket.take(now)
	held, r.held = r.held, 0
	return held, true
}

// A bucket is the token bucket of a Budget and of a Rate: it starts
// with perSecond tokens and refills at perSecond a second, up to
// perSecond. Its owner guards it.
type bucket struct {
	perSecond float64
	tokens    float64
	at        time.Time // when tokens was last brought up to date; zero before the first use
}

func newBucket(perSecond int) bucket {
	return bucket{perSecond: float64(perSecond), tokens: float64(perSecond)}
}

// refill brings tokens up to date at now.
func (k *bucket) refill(now time.Time) {
	if !k.at.IsZero() {
		k.tokens = min(k.perSecond, k.tokens+now.Sub(k.at).Seconds()*k.perSecond)
	}
	k.at = now
}

// wait returns how long from now until the bucket holds a whole token;
// zero or less when it holds one now.
func (k *bucket) wait(now time.Time) time.Duration {
	k.refill(now)
	return time.Duration((1 - k.tokens) / k.perSecond * float64(time.Second))
}

// take spends one token at now (the balance may go below zero when
// callers that waited take together; it refills from there).
func (k *bucket) take(now time.Time) {
	k.refill(now)
	k.tokens--
}
