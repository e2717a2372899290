package alloctest

import (
	"os"
	"testing"
)

// TestAlone: the test body runs in the child alone, named by the child's
// environment, and the parent returns at once.
func TestAlone(t *testing.T) {
	if !Alone(t) {
		if os.Getenv(envAlone) != "" {
			t.Fatalf("Alone returned false in the child (%s=%q)", envAlone, os.Getenv(envAlone))
		}
		return
	}
	if got := os.Getenv(envAlone); got != t.Name() {
		t.Fatalf("running alone with %s=%q, want %q", envAlone, got, t.Name())
	}
}
