package copytest_test

import (
	"slices"
	"testing"

	"github.com/checkfu/checkfu/internal/copytest"
	"github.com/checkfu/checkfu/internal/suitetest"
)

var table = [...]string{"a", "b"}

// TestFreshRejectsASharedTable: Fresh rejects a getter that hands out
// its table, and one that returns nothing, and passes one that copies.
func TestFreshRejectsASharedTable(t *testing.T) {
	suitetest.Rejects(t, "the table itself", func(r *suitetest.Recorder) {
		copytest.Fresh(r, "table", func() []string { return table[:] }, "x")
	})
	table = [...]string{"a", "b"} // the broken getter let its table be written over
	suitetest.Rejects(t, "nothing", func(r *suitetest.Recorder) {
		copytest.Fresh(r, "table", func() []string { return nil }, "x")
	})
	suitetest.Accepts(t, "a copy", func(r *suitetest.Recorder) {
		copytest.Fresh(r, "table", func() []string { return slices.Clone(table[:]) }, "x")
	})
}
