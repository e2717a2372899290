package broker

import (
	"context"
	"time"
)

// SetClock gives b's refusal rate a clock and a sleep of the test's.
func SetClock(b *Broker, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	b.refusals.SetClock(now, sleep)
}

// SetTimeouts shortens b's FirstByteTimeout and ModelIdleTimeout.
func SetTimeouts(b *Broker, firstByte, idle time.Duration) {
	b.firstByte, b.idle = firstByte, idle
}

// Slots returns how many connections wait for their first byte and how
// many model connections are served.
func Slots(b *Broker) (pending, models int) { return len(b.pending), len(b.models) }
