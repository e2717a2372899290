package broker

import (
	"context"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// Bounds on the refusals a sandbox can cause through its channel: each
// is recorded, so without a bound a refusal loop is a write amplifier
// into the plane's log.
const (
	// MaxRefusals is a channel's refusal budget. The refusal that
	// spends it is followed by one more record, [CodeRefusalsExceeded];
	// then the broker closes the channel and every connection, and
	// serves nothing more, recording nothing more.
	MaxRefusals = 64
	// RefusalsPerSecond bounds the rate of refusals: once a burst of
	// that many is spent, the broker waits before it handles the next
	// tools/call until the rate allows one more, so a refusal loop
	// writes at most this many records a second.
	RefusalsPerSecond = 16
)

var errRefusalsExceeded = checkfu.Refuse(CodeRefusalsExceeded, "broker: the channel's refusal budget of %d is spent", MaxRefusals)

// refusals is a channel's refusal budget and its rate, a token bucket of
// RefusalsPerSecond tokens refilled at RefusalsPerSecond a second.
type refusals struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex // guards the fields below
	spent  int
	tokens float64
	at     time.Time // when tokens was last brought up to date
	closed chan struct{}
}

func newRefusals() *refusals {
	return &refusals{now: time.Now, sleep: sleepCtx, tokens: RefusalsPerSecond, closed: make(chan struct{})}
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
func (r *refusals) refill() {
	now := r.now()
	if !r.at.IsZero() {
		r.tokens = min(RefusalsPerSecond, r.tokens+now.Sub(r.at).Seconds()*RefusalsPerSecond)
	}
	r.at = now
}

// pace waits until the rate allows one more refusal, or ctx ends, or
// the budget is spent (then it returns errRefusalsExceeded).
func (r *refusals) pace(ctx context.Context) error {
	for {
		r.mu.Lock()
		if r.spent >= MaxRefusals {
			r.mu.Unlock()
			return errRefusalsExceeded
		}
		r.refill()
		wait := time.Duration((1 - r.tokens) / RefusalsPerSecond * float64(time.Second))
		r.mu.Unlock()
		if wait <= 0 {
			return nil
		}
		if err := r.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// spend counts one refusal. It reports whether the budget is spent now,
// by this refusal: the caller then records CodeRefusalsExceeded and
// closes the channel, once.
func (r *refusals) spend() (last bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refill()
	r.tokens--
	r.spent++
	if r.spent == MaxRefusals {
		close(r.closed)
		return true
	}
	return false
}

// exhausted reports whether the budget is spent.
func (r *refusals) exhausted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent >= MaxRefusals
}
