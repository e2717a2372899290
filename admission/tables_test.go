package admission_test

import (
	"testing"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/internal/copytest"
)

// TestTablesAreCopies: Ecosystems and ProfileSchema return the caller's
// own copies; writing over one leaves the next call's answer unchanged.
func TestTablesAreCopies(t *testing.T) {
	copytest.Fresh(t, "Ecosystems", admission.Ecosystems, "haskell")
	copytest.Fresh(t, "ProfileSchema", admission.ProfileSchema, 0)
}
