package conformance

import (
	"testing"

	"github.com/checkfu/checkfu/internal/puretest"
)

// TestVerifierIsPure pins the package invariant that the verifier does no
// I/O: no file here or in the internal codec package imports a package
// that reaches files, processes or the network. The keys and envelopes it
// verifies with are package signing's, whose own TestVerifierIsPure holds
// the same for them.
func TestVerifierIsPure(t *testing.T) {
	puretest.Check(t, []string{".", "internal/wire"}, 8)
}
