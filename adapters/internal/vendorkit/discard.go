package vendorkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
)

// DiscardTimeout bounds the removal [Discard] makes of a sandbox Create
// gave up: 10 s, as a control request is bounded ([ControlTimeout]). The
// removal outlives the caller's context (a Create that was cancelled
// still removes what it made), so it needs a bound of its own: a vendor
// that never answers would otherwise hold Create, and the session that
// called it, for ever.
const DiscardTimeout = ControlTimeout

// Discard removes a sandbox that was made and is then given up (a check
// after its creation refused it), calling remove with a context that
// keeps ctx's values, does not end with ctx, and ends after
// DiscardTimeout. It returns err, why the sandbox was given up, joined
// with remove's failure when the removal failed. That failure names the
// sandbox by the vendor's id, quoted: the sandbox runs on at the vendor,
// no handle to it is returned, and its id is what the host deletes it
// by. vendor prefixes the message.
func Discard(ctx context.Context, err error, vendor, id string, remove func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DiscardTimeout)
	defer cancel()
	if rerr := remove(ctx); rerr != nil {
		return errors.Join(err, fmt.Errorf("%s: sandbox %s was made and is left at the vendor: removing it failed: %w", vendor, checkfu.Quote(id), rerr))
	}
	return err
}
