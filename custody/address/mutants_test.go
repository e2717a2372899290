package address

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "'+' allowed in a name", File: "address.go",
		Edits: []mutation.Edit{{Old: "case c == '.' || c == '_' || c == '-':", New: "case c == '.' || c == '_' || c == '-' || c == '+':"}},
		Kills: "TestNameByteTable"},
	{Name: "'-' refused in a name", File: "address.go",
		Edits: []mutation.Edit{{Old: "case c == '.' || c == '_' || c == '-':", New: "case c == '.' || c == '_':"}},
		Kills: "TestNameByteTable"},
}
