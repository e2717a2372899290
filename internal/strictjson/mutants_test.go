package strictjson

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "duplicate member", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if seen[k] {", New: "if false && seen[k] {"}}, Kills: "TestUnmarshalRefuses|TestParse"},
	{Name: "exact-case member", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if ft, ok = fields[k]; !ok {", New: "if ft, ok = fields[k]; false && !ok {"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "trailing data", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if s.pos != len(s.data) {", New: "if false {"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "UTF-8", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if !utf8.Valid(data) {", New: "if false {"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "unpaired surrogate", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if r >= 0xdc00 || !bytes.HasPrefix(s.data[s.pos:], []byte(`\\u`)) {", New: "if false {"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "object depth", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "func (s *scanner) object(t reflect.Type, depth int) error {\n\tif depth > s.maxDepth {", New: "func (s *scanner) object(t reflect.Type, depth int) error {\n\tif false {"}}, Kills: "TestOptions|TestUnmarshalRefuses"},
	{Name: "array depth", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "func (s *scanner) array(t reflect.Type, depth int) error {\n\tif depth > s.maxDepth {", New: "func (s *scanner) array(t reflect.Type, depth int) error {\n\tif false {"}}, Kills: "TestOptions|TestUnmarshalRefuses"},
	{Name: "size bound", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if opts.MaxBytes > 0 && len(data) > opts.MaxBytes {", New: "if false {"}}, Kills: "TestOptions"},
	{Name: "control characters", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "case c < 0x20:", New: "case false:"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "case variant of a declared member", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "if strings.EqualFold(name, k) {", New: "if false && strings.EqualFold(name, k) {"}}, Kills: "TestAllowUnknownMembers"},
	{Name: "unknown members refused by default", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "\t\t\t\tif !s.allowUnknown {", New: "\t\t\t\tif false {"}}, Kills: "TestUnmarshalRefuses"},
	{Name: "Parse builds an empty array as nil", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "a := []any{}", New: "var a []any"}}, Kills: "TestParseAgreesWithDecoder"},
	{Name: "Parse keeps only the last element of an array", File: "strictjson.go",
		Edits: []mutation.Edit{{Old: "a = append(a, v)", New: "a = append(a[:0], v)"}}, Kills: "TestParseAgreesWithDecoder"},
}
