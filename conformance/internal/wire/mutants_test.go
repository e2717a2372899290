package wire

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "re-encoding comparison", File: "wire.go",
		Edits: []mutation.Edit{{Old: "if !bytes.Equal(again, payload) {", New: "if false && !bytes.Equal(again, payload) {"}},
		Kills: "TestParseCanonicalComparesBytes"},
	{Name: "trailing payload bytes", File: "wire.go",
		Edits: []mutation.Edit{{Old: "if !s.Empty() {\n\t\treturn Record{}, noncanonical(\"conformance: payload has %d trailing bytes\", len(s))", New: "if false {\n\t\treturn Record{}, noncanonical(\"conformance: payload has %d trailing bytes\", len(s))"}}, Kills: "TestParse.*|TestDecode.*|TestRecord.*|TestRoundTrip.*|TestWire.*"},
	{Name: "unknown version", File: "wire.go",
		Edits: []mutation.Edit{{Old: "if version != Version {", New: "if false {"}}, Kills: "TestParse.*|TestDecode.*|TestRecord.*|TestRoundTrip.*|TestWire.*"},
	{Name: "unknown fact bits", File: "wire.go",
		Edits: []mutation.Edit{{Old: "if r.Facts&^KnownFacts != 0 {", New: "if false {"}}, Kills: "TestParse.*|TestDecode.*|TestRecord.*|TestRoundTrip.*|TestWire.*|TestCheck.*"},
}
