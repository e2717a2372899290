package broker

import (
	"context"
	"errors"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/refusalbudget"
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

// pace waits until the channel's refusal rate allows one more refusal,
// or ctx ends, or the budget is spent (then it returns
// errRefusalsExceeded).
func (b *Broker) pace(ctx context.Context) error {
	err := b.refusals.Pace(ctx)
	if errors.Is(err, refusalbudget.ErrSpent) {
		return errRefusalsExceeded
	}
	return err
}
