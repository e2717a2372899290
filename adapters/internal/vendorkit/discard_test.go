package vendorkit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// TestDiscardReportsAFailedRemoval: Discard returns why the sandbox was
// given up, alone when the removal succeeded, and joined with the
// removal's failure, naming the sandbox (quoted, as hostile text is) when
// it failed: that sandbox runs on at the vendor.
func TestDiscardReportsAFailedRemoval(t *testing.T) {
	why := checkfu.Refuse(checkfu.CodeConfigInvalid, "the envd host is refused")
	removed := 0
	if err := vendorkit.Discard(why, "acme", "sb-1", func() error { removed++; return nil }); err != why || removed != 1 {
		t.Errorf("Discard with a removal that succeeded = %v (removed %d times), want the reason alone, removed once", err, removed)
	}
	unreachable := errors.New("the vendor could not be reached")
	id := "sb-2\x1b[2J"
	err := vendorkit.Discard(why, "acme", id, func() error { return unreachable })
	if !errors.Is(err, checkfu.CodeConfigInvalid) || !errors.Is(err, unreachable) {
		t.Fatalf("Discard with a failed removal = %v, want the reason joined with the failure", err)
	}
	if msg := err.Error(); !strings.Contains(msg, checkfu.Quote(id)) || strings.Contains(msg, "\x1b") || !strings.HasPrefix(strings.Split(msg, "\n")[1], "acme: ") {
		t.Errorf("Discard's error %q does not name the sandbox left, quoted, after the vendor", msg)
	}
}
