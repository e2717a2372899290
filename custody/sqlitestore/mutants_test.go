package sqlitestore

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants break the checks the SQLite store relies on, here and in the
// packages below it; each names the tests that must fail.
var mutants = []mutation.Mutant{
	{Name: "ParseHandle and Validate in BindingFromColumns", File: "../address/address.go",
		Edits: []mutation.Edit{
			{Old: "\th, err := ParseHandle(handle)\n\tif err != nil {\n\t\treturn Binding{}, err\n\t}\n", New: "\th, _ := ParseHandle(handle)\n"},
			{Old: "\tb := Binding{Namespace: namespace, Integration: integration, Handle: h}\n\tif err := b.Validate(); err != nil {\n\t\treturn Binding{}, err\n\t}\n", New: "\tb := Binding{Namespace: namespace, Integration: integration, Handle: h}\n"}},
		Kills: "TestCorruptRowIsStoreError"},
	{Name: "rowBinding error ignored", File: "../internal/sqlrecords/sqlrecords.go",
		Edits: []mutation.Edit{
			{Old: "\tgot, err := s.rowBinding(ns, integ, handle)\n\tif err != nil {", New: "\tgot, err := s.rowBinding(ns, integ, handle)\n\tif false && err != nil {"},
			{Old: "\t\tb, err := s.rowBinding(ns, integ, handle)\n\t\tif err != nil {", New: "\t\tb, err := s.rowBinding(ns, integ, handle)\n\t\tif false && err != nil {"}},
		Kills: "TestCorruptRowIsStoreError"},
	{Name: "Get reads the whole sealed column", File: "../internal/sqlrecords/sqlrecords.go",
		Edits: []mutation.Edit{{Old: "var sealedPrefix = fmt.Sprintf(\"substr(sealed, 1, %d)\", custody.MaxSealedBytes+1)", New: "var sealedPrefix = \"sealed\""}},
		Kills: "TestOversizedRowIsStoreError"},
	{Name: "an oversized row returned by Get", File: "../internal/sqlrecords/sqlrecords.go",
		Edits: []mutation.Edit{{Old: "\tif len(sealed) > custody.MaxSealedBytes {\n", New: "\tif false {\n"}}, Kills: "TestOversizedRowIsStoreError"},
	{Name: "CompareAndSwap matches the prefix of an oversized row", File: "../internal/sqlrecords/sqlrecords.go",
		Edits: []mutation.Edit{{Old: "if len(cur) > custody.MaxSealedBytes || !bytes.Equal(cur, old) {", New: "if !bytes.Equal(cur, old) {"}},
		Kills: "TestOversizedRowIsStoreError"},
	{Name: "List without its bound", File: "../internal/sqlrecords/sqlrecords.go",
		Edits: []mutation.Edit{{Old: "\t\tif len(out) == custody.MaxListBindings {\n", New: "\t\tif false {\n"}}, Kills: "TestManyRows"},
	{Name: "DSN built as file: + path", File: "sqlitestore.go",
		Edits: []mutation.Edit{{Old: `return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()`, New: `return "file:" + path + "?" + q.Encode() + (&url.URL{}).Path`}},
		Kills: "TestOpenOddPaths"},
}
