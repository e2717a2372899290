package signing

import (
	"testing"

	"github.com/checkfu/checkfu/internal/puretest"
)

// TestVerifierIsPure pins the package invariant that the verifier does no
// I/O: only load.go may import packages that reach files, processes or the
// network, here and in the strict JSON package it parses attester sets with.
func TestVerifierIsPure(t *testing.T) {
	puretest.Check(t, []string{".", "../internal/strictjson"}, 10, "load.go")
}
