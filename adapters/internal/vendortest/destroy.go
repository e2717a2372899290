package vendortest

import (
	"context"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

// DestroyHeld runs destroy, whose Kill a test's fake holds unanswered,
// and fails t unless it returns nil once vendorkit.ControlTimeout has
// passed: not before (the fake did not hold it), and not 10 s after (the
// Kill is unbounded). held names what the fake holds, for the failure.
func DestroyHeld(t testing.TB, held string, destroy func(context.Context) error) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- destroy(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Destroy = %v", err)
		}
	case <-time.After(vendorkit.ControlTimeout + 10*time.Second):
		t.Fatalf("Destroy still waits on %s after %s", held, time.Since(start))
	}
	if d := time.Since(start); d < vendorkit.ControlTimeout-time.Second {
		t.Errorf("Destroy returned after %s, before the Kill's bound of %s: the test did not hold it", d, vendorkit.ControlTimeout)
	}
}
