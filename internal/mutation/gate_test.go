package mutation

import (
	"strings"
	"testing"
)

// gate is the check the self-test's mutant deletes.
func gate(s string) bool { return !strings.Contains(s, "..") }

func TestGate(t *testing.T) {
	if gate("../etc") {
		t.Error("gate admits ..")
	}
}
