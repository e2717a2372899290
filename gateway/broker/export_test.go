package broker

import (
	"context"
	"time"
)

// SetClock gives b's refusal rate a clock and a sleep of the test's.
func SetClock(b *Broker, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	b.refusals.now, b.refusals.sleep = now, sleep
}
