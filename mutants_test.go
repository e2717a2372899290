package checkfu_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "AtLeast without Valid", File: "checkfu.go",
		Edits: []mutation.Edit{{Old: "return g.Valid() && min.Valid() && g >= min", New: "return g >= min"}},
		Kills: "TestPropGradeOrderLaws"},
	{Name: "AtLeast strict", File: "checkfu.go",
		Edits: []mutation.Edit{{Old: "return g.Valid() && min.Valid() && g >= min", New: "return g.Valid() && min.Valid() && g > min"}},
		Kills: "TestPropGradeOrderLaws"},
	{Name: "Quote bound", File: "quote.go",
		Edits: []mutation.Edit{{Old: "if len(s) <= n {", New: "if true {"}},
		Kills: "TestQuote"},
	{Name: "Cause bound", File: "quote.go",
		Edits: []mutation.Edit{{Old: "return quoteN(err.Error(), MaxCause)", New: "return quoteN(err.Error(), MaxCause+1)"}},
		Kills: "TestCause"},
	{Name: "Quote character boundary", File: "quote.go",
		Edits: []mutation.Edit{{Old: "\t\t\t\tcut -= back\n", New: ""}},
		Kills: "TestQuote"},
	{Name: "code uniqueness", File: "codes_test.go",
		Edits: []mutation.Edit{{Old: "if w := byValue[v]; len(w) > 1 {", New: "if w := byValue[v]; len(w) > 1 && false {"}},
		Kills: "TestCodeViolationsCatch"},
}
