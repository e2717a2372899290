package vendorkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// TestDiscardReportsAFailedRemoval: Discard returns why the sandbox was
// given up, alone when the removal succeeded, and joined with the
// removal's failure, naming the sandbox (quoted, as hostile text is) when
// it failed: that sandbox runs on at the vendor.
func TestDiscardReportsAFailedRemoval(t *testing.T) {
	ctx := context.Background()
	why := checkfu.Refuse(checkfu.CodeConfigInvalid, "the envd host is refused")
	removed := 0
	if err := vendorkit.Discard(ctx, why, "acme", "sb-1", func(context.Context) error { removed++; return nil }); err != why || removed != 1 {
		t.Errorf("Discard with a removal that succeeded = %v (removed %d times), want the reason alone, removed once", err, removed)
	}
	unreachable := errors.New("the vendor could not be reached")
	id := "sb-2\x1b[2J"
	err := vendorkit.Discard(ctx, why, "acme", id, func(context.Context) error { return unreachable })
	if !errors.Is(err, checkfu.CodeConfigInvalid) || !errors.Is(err, unreachable) {
		t.Fatalf("Discard with a failed removal = %v, want the reason joined with the failure", err)
	}
	if msg := err.Error(); !strings.Contains(msg, checkfu.Quote(id)) || strings.Contains(msg, "\x1b") || !strings.HasPrefix(strings.Split(msg, "\n")[1], "acme: ") {
		t.Errorf("Discard's error %q does not name the sandbox left, quoted, after the vendor", msg)
	}
}

type ctxKey struct{}

// TestDiscardIsBoundedAndOutlivesTheCaller: the removal runs under a
// context that the caller's end does not end (a cancelled Create still
// removes what it made), that keeps the caller's values, and that ends
// after DiscardTimeout at the latest (a vendor that never answers cannot
// hold Create for ever).
func TestDiscardIsBoundedAndOutlivesTheCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	cancel()
	var deadline time.Time
	var set bool
	start := time.Now()
	_ = vendorkit.Discard(ctx, errors.New("given up"), "acme", "sb-1", func(rctx context.Context) error {
		if err := rctx.Err(); err != nil {
			t.Errorf("the removal's context has ended with the caller's: %v", err)
		}
		if rctx.Value(ctxKey{}) != "v" {
			t.Error("the removal's context lost the caller's values")
		}
		deadline, set = rctx.Deadline()
		return nil
	})
	end := time.Now()
	if !set || deadline.Before(start.Add(vendorkit.DiscardTimeout)) || deadline.After(end.Add(vendorkit.DiscardTimeout)) {
		t.Errorf("the removal's deadline is %v after the call (set %v), want DiscardTimeout (%s)", deadline.Sub(start), set, vendorkit.DiscardTimeout)
	}
}
